"""The fleet file: the IBM i partitions, how to reach them, and their queue managers.

Every name in it is validated on load, before anything is sent to a host, so a fleet file cannot smuggle CL into a
command. Relative paths are taken from the fleet file's folder, and a queue manager's library defaults to
QM + its name (TEST -> QMTEST), as CRTMQM does.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pydantic import ValidationError

from mqjournal.fleet import (
    FleetConfig,
    HostConfig,
    PartitionSystemConfig,
    QueueManagerConfig,
    conn_id_for,
    legacy_conn_id_for,
    load_fleet,
)

SMALL_FLEET = """\
user: MQADMIN
state_dir: state
hosts:
  - name: ibmi1
    address: 10.0.0.1
    utc_offset: "+02:00"
    queue_managers:
      - name: TEST
      - name: PAYMENTS.PROD
        library: QMPAY
  - name: ibmi2
    port: 2222
    user: mqops
"""


def write_fleet(folder: Path, text: str) -> Path:
    path = folder / "fleet.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def host_with(**fields) -> dict:
    return {"name": "ibmi1", **fields}


@pytest.fixture
def fleet(tmp_path) -> FleetConfig:
    return load_fleet(write_fleet(tmp_path, SMALL_FLEET))


# --------------------------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------------------------


def test_load_fleet_reads_hosts_and_their_queue_managers(fleet):
    assert [h.name for h in fleet.hosts] == ["ibmi1", "ibmi2"]
    assert [q.name for q in fleet.host("ibmi1").queue_managers] == ["TEST", "PAYMENTS.PROD"]
    assert fleet.host("ibmi2").port == 2222


def test_load_fleet_resolves_state_dir_relative_to_the_fleet_file(tmp_path, fleet):
    assert fleet.state_dir == tmp_path.resolve() / "state"


def test_load_fleet_puts_client_key_and_known_hosts_in_the_state_dir_by_default(tmp_path, fleet):
    assert fleet.client_key == tmp_path.resolve() / "state" / "client_key"
    assert fleet.known_hosts == tmp_path.resolve() / "state" / "known_hosts"


def test_load_fleet_resolves_an_explicit_relative_key_path_from_the_fleet_file(tmp_path):
    fleet = load_fleet(write_fleet(tmp_path, "client_key: keys/id_ed25519\nhosts: []\n"))
    assert fleet.client_key == tmp_path.resolve() / "keys" / "id_ed25519"


def test_load_fleet_keeps_an_absolute_state_dir(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (tmp_path / "conf").mkdir()
    fleet = load_fleet(write_fleet(tmp_path / "conf", f"state_dir: {elsewhere}\nhosts: []\n"))
    assert fleet.state_dir == elsewhere


def test_queue_manager_library_defaults_to_qm_followed_by_the_name(fleet):
    assert fleet.host("ibmi1").queue_managers[0].qmgr_library == "QMTEST"


def test_queue_manager_library_named_in_the_fleet_file_is_used(fleet):
    assert fleet.host("ibmi1").queue_managers[1].qmgr_library == "QMPAY"


def test_queue_manager_instance_defaults_to_A_for_a_single_instance_queue_manager(fleet):
    assert fleet.host("ibmi1").queue_managers[0].instance == "A"


def test_host_user_overrides_the_fleet_user_and_is_upper_cased(fleet):
    assert fleet.user_for(fleet.host("ibmi1")) == "MQADMIN"
    assert fleet.user_for(fleet.host("ibmi2")) == "MQOPS"


# --------------------------------------------------------------------------------------------------------------
# Rejected fleet files
# --------------------------------------------------------------------------------------------------------------


def test_duplicate_host_names_are_rejected():
    with pytest.raises(ValidationError, match="host names must be unique"):
        FleetConfig.model_validate({"hosts": [host_with(), host_with(address="10.0.0.2")]})


@pytest.mark.parametrize(
    "first, second",
    [
        pytest.param("prod-1", "prod.1", id="hyphen-and-dot"),
        pytest.param("a.b-c", "a-b.c", id="mixed"),
        pytest.param("prod1", "PROD1", id="case-only"),
        pytest.param("prod1", "ibmi-prod1", id="ibmi-prefix"),
        pytest.param("ibmi-prod1", "ibmi-ibmi-prod1", id="former-id"),
    ],
)
def test_hosts_that_map_to_one_airflow_connection_are_rejected(first, second, tmp_path):
    # One connection for both: one host's steps would run on the other, and the audit and catalog would lie.
    text = f"hosts:\n  - name: {first}\n  - name: {second}\n"
    with pytest.raises(ValidationError) as caught:
        load_fleet(write_fleet(tmp_path, text))
    message = str(caught.value)
    assert first in message and second in message and conn_id_for(first) in message


def test_the_connection_id_of_a_host_is_ibmi_and_its_name_with_underscores():
    assert conn_id_for("ibmi1") == "ibmi_ibmi1"
    assert conn_id_for("prod-1.example.com") == "ibmi_prod_1_example_com"


def test_a_host_named_ibmi_something_gets_ibmi_once_in_its_connection_id():
    assert conn_id_for("ibmi-prod1") == "ibmi_prod1"
    assert conn_id_for("IBMI.prod1") == "IBMI_prod1"
    assert legacy_conn_id_for("ibmi-prod1") == "ibmi_ibmi_prod1"
    assert legacy_conn_id_for("prod1") == conn_id_for("prod1") == "ibmi_prod1"


def test_airflow_connections_use_the_fleet_files_mapping():
    from mqjournal.airflow import connections

    assert connections.conn_id_for is conn_id_for


def test_duplicate_queue_manager_on_a_host_is_rejected():
    queue_managers = [{"name": "TEST"}, {"name": "TEST", "library": "QMTEST2"}]
    with pytest.raises(ValidationError, match="must be unique"):
        HostConfig.model_validate(host_with(queue_managers=queue_managers))


def test_two_queue_managers_in_one_library_are_rejected():
    queue_managers = [{"name": "TEST"}, {"name": "TEST2", "library": "QMTEST"}]
    with pytest.raises(ValidationError, match="must be unique"):
        HostConfig.model_validate(host_with(queue_managers=queue_managers))


def test_duplicate_queue_manager_in_a_fleet_file_is_rejected_on_load(tmp_path):
    text = "hosts:\n  - name: ibmi1\n    queue_managers:\n      - name: TEST\n      - name: TEST\n"
    with pytest.raises(ValidationError, match="must be unique"):
        load_fleet(write_fleet(tmp_path, text))


def test_malicious_queue_manager_name_is_rejected():
    with pytest.raises(ValidationError, match="not a valid queue manager name"):
        QueueManagerConfig.model_validate({"name": "TEST'); DLTLIB QGPL"})


def test_malicious_queue_manager_name_in_a_fleet_file_is_rejected_on_load(tmp_path):
    text = 'hosts:\n  - name: ibmi1\n    queue_managers:\n      - name: "TEST\'); DLTLIB QGPL"\n'
    with pytest.raises(ValidationError, match="not a valid queue manager name"):
        load_fleet(write_fleet(tmp_path, text))


def test_malicious_library_name_is_rejected():
    with pytest.raises(ValidationError, match="not a valid IBM i object name"):
        QueueManagerConfig.model_validate({"name": "TEST", "library": "QM;RM"})


def test_queue_manager_without_a_derivable_library_must_name_one():
    # QM + LONGQMGRNAME is 14 characters: CRTMQM's mangling is not guessed, the fleet file must say.
    with pytest.raises(ValidationError, match="queue manager library"):
        HostConfig.model_validate(host_with(queue_managers=[{"name": "LONGQMGRNAME"}]))


def test_queue_manager_with_a_long_name_is_accepted_with_its_library_named():
    host = HostConfig.model_validate(host_with(queue_managers=[{"name": "LONGQMGRNAME", "library": "QMLONGQMGR"}]))
    assert host.queue_managers[0].qmgr_library == "QMLONGQMGR"


def test_malicious_host_user_is_rejected():
    with pytest.raises(ValidationError):
        HostConfig.model_validate(host_with(user="QSECOFR) DLTLIB(QGPL"))


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("ibmi1; rm -rf /", id="shell-injection"),
        pytest.param("-ibmi1", id="leading-hyphen"),
        pytest.param("", id="empty"),
    ],
)
def test_bad_host_name_is_rejected(name):
    with pytest.raises(ValidationError):
        HostConfig.model_validate({"name": name})


@pytest.mark.parametrize(
    "offset",
    [
        pytest.param("+1:00", id="one-digit-hour"),
        pytest.param("+0100", id="no-colon"),
        pytest.param("01:00", id="no-sign"),
        pytest.param("+24:00", id="hour-24"),
        pytest.param("+01:60", id="minute-60"),
        pytest.param("UTC", id="zone-name"),
        pytest.param("Europe/Paris", id="tz-database-name"),
        pytest.param("+01:00\n", id="trailing-newline"),
    ],
)
def test_bad_utc_offset_is_rejected(offset):
    with pytest.raises(ValidationError, match="not a UTC offset"):
        HostConfig.model_validate(host_with(utc_offset=offset))


# --------------------------------------------------------------------------------------------------------------
# The host's time zone
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("offset", "expected"),
    [
        pytest.param("+00:00", timedelta(0), id="UTC"),
        pytest.param("+02:00", timedelta(hours=2), id="east"),
        pytest.param("-05:00", timedelta(hours=-5), id="west"),
        pytest.param("+05:30", timedelta(hours=5, minutes=30), id="east-half-hour"),
        pytest.param("-03:30", -timedelta(hours=3, minutes=30), id="west-half-hour"),
    ],
)
def test_host_tz_is_the_fixed_utc_offset(offset, expected):
    host = HostConfig.model_validate(host_with(utc_offset=offset))
    assert host.tz == timezone(expected)


def test_host_tz_defaults_to_utc():
    assert HostConfig.model_validate(host_with()).tz.utcoffset(None) == timedelta(0)


def test_host_tz_turns_amqjrninf_local_time_into_an_aware_time(fleet):
    # AMQJRNINF holds the partition's local time; ibmi1 runs at +02:00.
    local = datetime(2024, 5, 27, 14, 5, 35).replace(tzinfo=fleet.host("ibmi1").tz)
    assert local.astimezone(UTC) == datetime(2024, 5, 27, 12, 5, 35, tzinfo=UTC)


@pytest.mark.parametrize("factor", [0, -1, 1.5, float("inf")])
def test_a_save_file_size_factor_out_of_bounds_is_refused(factor):
    with pytest.raises(ValueError, match="save_file_size_factor"):
        PartitionSystemConfig(save_file_size_factor=factor)


def test_a_compression_ratio_out_of_bounds_or_for_no_dtacpr_value_is_refused():
    with pytest.raises(ValueError, match="save_compression_ratios"):
        PartitionSystemConfig.model_validate({"save_compression_ratios": {"*LOW": 0}})
    with pytest.raises(ValueError, match="save_compression_ratios"):
        PartitionSystemConfig.model_validate({"save_compression_ratios": {"*ZIP": 0.5}})


def test_the_demo_fleet_moves_save_files_as_large_as_ibm_i_makes_them():
    """So that the gate's estimate of the save files and the run report's real sizes agree in `make demo`."""
    fleet = load_fleet(Path(__file__).resolve().parents[2] / "docker" / "fleet.example.yaml")
    assert {h.system.save_file_size_factor for h in fleet.hosts} == {1.0}


def test_a_hosts_time_zone_rules_name_an_olson_zone():
    host = HostConfig.model_validate(host_with(time_zone_rules="America/New_York"))
    assert host.time_zone_rules == "America/New_York"


@pytest.mark.parametrize("rules", ["America/Springfield", "america/new_york", "America", "../etc/passwd", ""])
def test_an_unknown_olson_zone_in_time_zone_rules_is_refused_naming_the_host_and_the_field(rules):
    with pytest.raises(ValidationError, match=r"host ibmi1: time_zone_rules .* is not an Olson time zone"):
        HostConfig.model_validate(host_with(name="ibmi1", time_zone_rules=rules))


def test_a_linux_host_among_the_hosts_is_kept_apart_and_its_names_are_checked() -> None:
    from mqjournal.fleet import FleetConfig

    fleet = FleetConfig.model_validate(
        {
            "hosts": [
                {"name": "ibmi1", "queue_managers": [{"name": "TEST"}]},
                {"name": "mq-linux1", "platform": "linux", "queue_managers": [{"name": "QM.ORDERS/1"}]},
            ]
        }
    )

    assert [h.name for h in fleet.hosts] == ["ibmi1"]
    assert [(h.name, h.user, [q.name for q in h.queue_managers]) for h in fleet.linux_hosts] == [
        ("mq-linux1", "mqjournal", ["QM.ORDERS/1"])
    ]
    assert FleetConfig.model_validate(fleet.model_dump(mode="json")) == fleet
    for bad in (
        {"queue_managers": [{"name": "QM1; rm -rf /"}]},
        {"queue_managers": [{"name": "QM1\nDISPLAY QMGR"}]},
        {"user": "root;id"},
        {"mq_bin": "/opt/mqm/../../bin"},
        {"mq_bin": "$(id)"},
    ):
        with pytest.raises(ValueError):
            FleetConfig.model_validate({"hosts": [{"name": "l1", "platform": "linux", **bad}]})
    with pytest.raises(ValueError, match="host names must be unique"):
        FleetConfig.model_validate({"hosts": [{"name": "a"}, {"name": "a", "platform": "linux"}]})


def test_an_aix_host_is_a_unix_host_with_aix_s_installation_and_forms() -> None:
    from mqjournal.fleet import FleetConfig
    from mqjournal.linuxmq.platforms import AIX, LINUX

    fleet = FleetConfig.model_validate(
        {
            "hosts": [
                {"name": "ibmi1", "queue_managers": [{"name": "TEST"}]},
                {"name": "mq-aix1", "platform": "aix", "queue_managers": [{"name": "QM.PAY"}]},
                {"name": "mq-aix2", "platform": "aix", "mq_bin": "/opt/mq94/usr/mqm/bin"},
                {"name": "mq-linux1", "platform": "linux"},
            ]
        }
    )

    assert [h.name for h in fleet.hosts] == ["ibmi1"]
    assert [(h.name, h.platform, h.mq_bin, h.unix_platform) for h in fleet.linux_hosts] == [
        ("mq-aix1", "aix", "/usr/mqm/bin", AIX),
        ("mq-aix2", "aix", "/opt/mq94/usr/mqm/bin", AIX),  # an installation of its own (a USIL) is kept
        ("mq-linux1", "linux", "/opt/mqm/bin", LINUX),
    ]
    assert FleetConfig.model_validate(fleet.model_dump(mode="json")) == fleet
    with pytest.raises(ValueError):
        FleetConfig.model_validate({"hosts": [{"name": "h1", "platform": "hpux"}]})  # no such platform here
    with pytest.raises(ValueError):
        FleetConfig.model_validate({"hosts": [{"name": "a1", "platform": "aix", "mq_bin": "/usr/mqm/bin;id"}]})

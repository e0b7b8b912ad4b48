"""The rows a simulated partition shows through its SQL services (QSYS2 views and table functions)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from mqjournal.mqmessages import LAYOUTS
from mqjournal.msgformats import MESSAGE_FILES, parse_declared
from mqjournal.sim import journal as jrn
from mqjournal.sim import language, releases
from mqjournal.sim.messages import CATALOG
from mqjournal.sim.model import Partition, qualified
from mqjournal.sim.protocol import RoutineError

if TYPE_CHECKING:
    from mqjournal.sim.sql import ViewTables

# The libraries a *LIBL search looks in (the job's library list, as the CL commands see it).
LIBRARY_LIST = ("QSYS", "QSYS2", "QHLPSYS", "QUSRSYS", "QGPL", "QTEMP")

# JOURNAL_RECEIVER_INFO.SIZE is in kilobytes (see sql.py for the source note).
SIZE_UNIT_BYTES = 1024


# What a local journal made by CRTMQM shows for its receiver size and fixed-length data options (nothing minimized,
# the fixed-length data IBM i includes by default): the simulator never changes them.
_LOCAL_JOURNAL_OPTIONS = {
    "MINIMIZE_ESD_FOR_DATA_AREAS": "NO",
    "MINIMIZE_ESD_FOR_FILES": "NO",
    "FIXED_LENGTH_DATA_INCLUDES_JOB_NAME": "YES",
    "FIXED_LENGTH_DATA_INCLUDES_USER_NAME": "YES",
    "FIXED_LENGTH_DATA_INCLUDES_PROGRAM_NAME": "YES",
}


class PartitionCatalog:
    """Implements protocol.SqlCatalog for one partition (read while the partition's lock is held)."""

    def __init__(self, partition: Partition, *, view_tables: ViewTables | None = None) -> None:
        self.partition = partition
        self.view_tables = view_tables  # the partition's tables kept for this state of it (sql.ViewTables)

    def now(self) -> datetime:
        """CURRENT TIMESTAMP: the partition's local time."""
        return self.partition.local_now()

    def current_server(self) -> str:
        """CURRENT SERVER: the partition's own relational database (the db2 utility connects to no other)."""
        return self.partition.rdb_name()

    def rows(self, view: str) -> Iterable[Mapping[str, object]]:
        producer = {
            "QSYS2.JOURNAL_RECEIVER_INFO": self._receivers,
            "QSYS2.JOURNAL_INFO": self._journals,
            "QSYS2.MESSAGE_QUEUE_INFO": self._messages,
            "QSYS2.USER_SPACE": self._user_spaces,
            "QSYS2.SYSTEM_VALUE_INFO": self._system_values,
            "QSYS2.OBJECT_STATISTICS": self._objects,
            "QSYS2.SAVE_FILE_OBJECTS": self._save_file_objects,
            "QSYS2.SYSCOLUMNS": self._syscolumns,
            "QSYS2.SYSROUTINES": self._sysroutines,
            "QSYS2.ASP_INFO": self._asp_info,
            "QSYS2.USER_INFO": self._user_info,
            "QSYS2.MESSAGE_FILE_DATA": self._message_file_data,
            "SYSIBMADM.ENV_SYS_INFO": self._env_sys_info,
            "QSYS2.GROUP_PTF_INFO": self._group_ptf_info,
        }.get(view)
        return [] if producer is None else list(producer())

    def _receivers(self) -> Iterator[dict]:
        for r in self.partition.receivers.values():
            yield {
                "JOURNAL_RECEIVER_LIBRARY": r.library,
                "JOURNAL_RECEIVER_NAME": r.name,
                "DESCRIPTIVE_TEXT": r.text,
                "JOURNAL_RECEIVER_ASP_NUMBER": 1,
                "JOURNAL_RECEIVER_ASP_NAME": "*SYSBAS",
                "JOURNAL_LIBRARY": r.journal_library,
                "JOURNAL_NAME": r.journal,
                "THRESHOLD": r.threshold_kb,
                "SIZE": -(-r.size_bytes // SIZE_UNIT_BYTES),
                "STATUS": r.status.value,
                "NUMBER_OF_JOURNAL_ENTRIES": r.entries,
                "FIRST_SEQUENCE_NUMBER": r.first_sequence,
                "LAST_SEQUENCE_NUMBER": r.last_sequence,
                "ATTACH_TIMESTAMP": self._local(r.attached_at),
                "DETACH_TIMESTAMP": self._local(r.detached_at),
                "SAVE_TIMESTAMP": self._local(r.saved_at),
                "PREVIOUS_JOURNAL_RECEIVER": r.previous,
                "PREVIOUS_JOURNAL_RECEIVER_LIBRARY": r.previous_library,
                "NEXT_JOURNAL_RECEIVER": r.next,
                "NEXT_JOURNAL_RECEIVER_LIBRARY": r.next_library,
                "PENDING_TRANSACTIONS": "NO",
                "REMOTE_JOURNAL_TYPE": None,
                "MAXIMUM_NULL_VALUE_INDICATORS": 0,
                **_LOCAL_JOURNAL_OPTIONS,
                "FILTER_BY_OBJECT": "NO",
                "FILTER_IMAGES": "NO",
                "FILTER_PROGRAMS": "NO",
            }

    def _journals(self) -> Iterator[dict]:
        for j in self.partition.journals.values():
            receivers = self.partition.journal_receivers(j)
            yield {
                "JOURNAL_NAME": j.name,
                "JOURNAL_LIBRARY": j.library,
                "ASP_NUMBER": 1,
                "ATTACHED_JOURNAL_RECEIVER_NAME": j.attached,
                "ATTACHED_JOURNAL_RECEIVER_LIBRARY": j.attached_library,
                "MESSAGE_QUEUE": j.message_queue,
                "MESSAGE_QUEUE_LIBRARY": j.message_queue_library,
                "DELETE_RECEIVER_OPTION": "YES" if j.delete_receivers else "NO",
                "MANAGE_RECEIVER_OPTION": "SYSTEM" if j.system_managed else "USER",
                "RECEIVER_MAXIMUM_SIZE": "*MAXOPT2",
                "JOURNAL_TYPE": "*LOCAL",
                "JOURNAL_STATE": "*ACTIVE",
                "NUMBER_JOURNAL_RECEIVERS": len(receivers),
                "TOTAL_SIZE_JOURNAL_RECEIVERS": sum(-(-r.size_bytes // SIZE_UNIT_BYTES) for r in receivers),
                "JOURNAL_TEXT": j.text or None,
                "REMOVE_INTERNAL_ENTRIES": "YES",
                "NUMBER_REMOTE_JOURNALS": 0,
                "REMOVE_FIXED_LENGTH_DETAIL": "NO",
                "JOURNAL_CACHE": "NO",
                **_LOCAL_JOURNAL_OPTIONS,
            }

    def _messages(self) -> Iterator[dict]:
        job = self.partition.job_format()
        for queue in self.partition.message_queues.values():
            for m in queue.messages:
                data = None if m.data is None else bytes.fromhex(m.data)
                yield {
                    "MESSAGE_QUEUE_LIBRARY": queue.library,
                    "MESSAGE_QUEUE_NAME": queue.name,
                    "MESSAGE_ID": m.id,
                    "MESSAGE_TYPE": m.type.value,
                    "MESSAGE_SUBTYPE": None,
                    # Made from the replacement data in the job's language and date format, as IBM i does.
                    "MESSAGE_TEXT": m.text
                    if data is None or m.id not in CATALOG or m.id in self.partition.message_formats
                    else language.text(m.id, data, CATALOG[m.id].text, job),
                    "MESSAGE_TOKENS": data or None,
                    "SEVERITY": m.severity,
                    "MESSAGE_TIMESTAMP": self._local(m.at),
                    "MESSAGE_KEY": m.key.to_bytes(4, "big"),
                    "ASSOCIATED_MESSAGE_KEY": None,
                    "FROM_USER": m.from_user,
                    "FROM_JOB": m.from_job or None,
                    "FROM_PROGRAM": m.from_program or None,
                    "MESSAGE_FILE_LIBRARY": "QSYS"
                    if m.id and m.id[:3] in ("CPF", "CPI", "CPA", "CPC", "CPD")
                    else "QMQM",
                    "MESSAGE_FILE_NAME": "QCPFMSG" if m.id and m.id.startswith("CP") else "AMQMSG",
                    "MESSAGE_SECOND_LEVEL_TEXT": None,
                }

    def _message_file_data(self) -> Iterator[dict]:
        """QSYS2.MESSAGE_FILE_DATA rows of the messages whose layout the simulator knows (mqmessages.LAYOUTS, or the
        partition's declared `message_formats`). MESSAGE_DATA is written as ADDMSGD's FMT parameter writes the
        fields (assumed: IBM's description of the string was not retrieved; msgformats.parse_declared)."""
        for msg_id, (library, file) in MESSAGE_FILES.items():
            declared = self.partition.message_formats.get(msg_id)
            fields = parse_declared(declared, None) if declared else LAYOUTS[msg_id]
            yield {
                "MESSAGE_FILE_LIBRARY": library,
                "MESSAGE_FILE": file,
                "MESSAGE_ID": msg_id,
                "SEVERITY": CATALOG[msg_id].severity if msg_id in CATALOG else 0,
                "MESSAGE_DATA_COUNT": len(fields or ()),
                "MESSAGE_DATA": " ".join(f"({f.fmt()})" for f in fields or ()) or None,
            }

    def _user_spaces(self) -> Iterator[dict]:
        for space in self.partition.user_spaces.values():
            yield {
                "USER_SPACE_LIBRARY": space.library,
                "USER_SPACE": space.name,
                "DATA": None if self.partition.faults.ccsid_unconvertible else space.data,
                "DATA_BINARY": space.data.encode("cp037"),
            }

    def _local(self, value: datetime | None) -> datetime | None:
        """IBM i timestamps carry no offset: they are the partition's local time then, DST included."""
        return None if value is None else self.partition.local(value)

    def _system_values(self) -> Iterator[dict]:
        minutes = int(self.partition.utc_offset_now().total_seconds() // 60)
        sign = "+" if minutes >= 0 else "-"
        yield {
            "SYSTEM_VALUE_NAME": "QUTCOFFSET",
            "CURRENT_NUMERIC_VALUE": None,
            "CURRENT_CHARACTER_VALUE": f"{sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}",
        }
        yield {
            "SYSTEM_VALUE_NAME": "QTIMZON",
            "CURRENT_NUMERIC_VALUE": None,
            "CURRENT_CHARACTER_VALUE": self.partition.time_zone_description(),
        }
        # The job's language and date format come from these system values unless its user profile or job
        # description says otherwise; the simulator's job takes the fleet file's `system:` for both.
        job = self.partition.job
        for name, text in (
            ("QLANGID", job.language),
            ("QDATFMT", job.date_format.lstrip("*")),
            ("QDATSEP", job.date_separator),
            ("QSRLNBR", self.partition.serial_number()),
        ):
            yield {"SYSTEM_VALUE_NAME": name, "CURRENT_NUMERIC_VALUE": None, "CURRENT_CHARACTER_VALUE": text}
        yield {
            "SYSTEM_VALUE_NAME": "QCCSID",
            "CURRENT_NUMERIC_VALUE": language.CCSIDS[job.language],
            "CURRENT_CHARACTER_VALUE": None,
        }
        yield {
            "SYSTEM_VALUE_NAME": "QDATETIME",
            "CURRENT_NUMERIC_VALUE": None,
            "CURRENT_CHARACTER_VALUE": self.partition.local_now().strftime("%Y%m%d%H%M%S%f"),
        }

    def _objects(self) -> Iterator[dict]:
        """QSYS2.OBJECT_STATISTICS rows: the objects the simulator models, OBJATTRIBUTE as DSPOBJD shows it."""
        p = self.partition
        for library in p.libraries:
            if library != "QSYS":
                yield {
                    "OBJNAME": library,
                    "OBJLIB": "QSYS",
                    "OBJTYPE": "*LIB",
                    "OBJATTRIBUTE": "PROD",
                    "OBJOWNER": "QSYS" if library.startswith("Q") and not library.startswith("QM") else "QMQM",
                }
        for r in p.receivers.values():
            yield {
                "OBJNAME": r.name,
                "OBJLIB": r.library,
                "OBJTYPE": "*JRNRCV",
                "OBJATTRIBUTE": None,
                "OBJCREATED": self._local(r.created_at),
                "OBJSIZE": r.size_bytes,
                "OBJOWNER": r.owner,
                "OBJTEXT": r.text or None,
                "SAVE_TIMESTAMP": self._local(r.saved_at),
            }
        for j in p.journals.values():
            yield {
                "OBJNAME": j.name,
                "OBJLIB": j.library,
                "OBJTYPE": "*JRN",
                "OBJATTRIBUTE": None,
                "OBJOWNER": "QMQM",
                "OBJSIZE": 8_192,
                "OBJTEXT": j.text or None,
            }
        for s in p.save_files.values():
            yield {
                "OBJNAME": s.name,
                "OBJLIB": s.library,
                "OBJTYPE": "*FILE",
                "OBJATTRIBUTE": "SAVF",
                "OBJCREATED": self._local(s.created_at),
                "OBJSIZE": s.size_bytes,
                "OBJOWNER": "MQADMIN",
                "OBJTEXT": s.text or None,
            }
        for u in p.user_spaces.values():
            yield {
                "OBJNAME": u.name,
                "OBJLIB": u.library,
                "OBJTYPE": "*USRSPC",
                "OBJATTRIBUTE": None,
                "OBJOWNER": "QMQM",
                "OBJSIZE": 4_096,
            }
        for q in p.message_queues.values():
            yield {
                "OBJNAME": q.name,
                "OBJLIB": q.library,
                "OBJTYPE": "*MSGQ",
                "OBJATTRIBUTE": None,
                "OBJOWNER": "QSYS" if q.library == "QSYS" else "QMQM",
                "OBJSIZE": 16_384,
            }

    def _save_file_objects(self) -> Iterator[dict]:
        """QSYS2.SAVE_FILE_OBJECTS rows: what each save file holds (SAVOBJ or SAVLIB content), as DSPSAVF lists it."""
        for s in self.partition.save_files.values():
            for saved in s.objects:
                r = saved.receiver
                yield {
                    "SAVE_FILE_LIBRARY": s.library,
                    "SAVE_FILE": s.name,
                    "LIBRARY_NAME": r.library,
                    "OBJECT_NAME": r.name,
                    "OBJECT_TYPE": "*JRNRCV",
                    "OBJECT_ATTRIBUTE": None,
                    "TEXT_DESCRIPTION": r.text or None,
                }
            image = s.library_image
            if image is not None:
                for j in image.journals:
                    yield {
                        "SAVE_FILE_LIBRARY": s.library,
                        "SAVE_FILE": s.name,
                        "LIBRARY_NAME": j.library,
                        "OBJECT_NAME": j.name,
                        "OBJECT_TYPE": "*JRN",
                        "TEXT_DESCRIPTION": j.text or None,
                    }
                for u in image.user_spaces:
                    yield {
                        "SAVE_FILE_LIBRARY": s.library,
                        "SAVE_FILE": s.name,
                        "LIBRARY_NAME": u.library,
                        "OBJECT_NAME": u.name,
                        "OBJECT_TYPE": "*USRSPC",
                    }
                for q in image.message_queues:
                    yield {
                        "SAVE_FILE_LIBRARY": s.library,
                        "SAVE_FILE": s.name,
                        "LIBRARY_NAME": q.library,
                        "OBJECT_NAME": q.name,
                        "OBJECT_TYPE": "*MSGQ",
                    }

    # --- table functions that act ----------------------------------------------------------------------------

    def invoke(self, function: str, args: Mapping[str, str]) -> list[dict]:
        if function == "QSYS2.SAVE_FILE_OBJECTS":
            return self._save_file_content(args)
        if function != "QSYS2.ASSOCIATE_JOURNAL_RECEIVER":
            raise KeyError(function)
        return self._associate(args)

    def _save_file_content(self, args: Mapping[str, str]) -> list[dict]:
        name, library = args["SAVE_FILE"], args.get("SAVE_FILE_LIBRARY", "*LIBL")
        if library in ("*LIBL", "*CURLIB"):
            library = next((lib for lib in LIBRARY_LIST if qualified(lib, name) in self.partition.save_files), library)
        if qualified(library, name) not in self.partition.save_files:
            # The function fails as QSRLSAVF does underneath: the save file is not there (CPF9812).
            raise RoutineError(-443, "38501", f"File {name} in library {library} not found.")
        name_filter, type_filter = args.get("OBJECT_NAME_FILTER", "*ALL"), args.get("OBJECT_TYPE_FILTER", "*ALL")
        return [
            row
            for row in self._save_file_objects()
            if (row["SAVE_FILE_LIBRARY"], row["SAVE_FILE"]) == (library, name)
            and jrn.generic_match(name_filter, row["OBJECT_NAME"])
            and type_filter in ("*ALL", row["OBJECT_TYPE"])
        ]

    def _library(self, value: str, objtype: str, name: str) -> str:
        if value == "*CURLIB":
            return "QGPL"
        if value == "*LIBL":
            table = self.partition.journals if objtype == "*JRN" else self.partition.receivers
            return next((lib for lib in LIBRARY_LIST if qualified(lib, name) in table), "*LIBL")
        return value

    def _associate(self, args: Mapping[str, str]) -> list[dict]:
        """QSYS2.ASSOCIATE_JOURNAL_RECEIVER: receivers once attached to the journal rejoin its receiver directory."""
        p = self.partition
        journal_name, receiver_name = args["JOURNAL_NAME"], args["RECEIVER_NAME"]
        journal_library = self._library(args["JOURNAL_LIBRARY"], "*JRN", journal_name)
        # IBM refuses only *ALL with *LIBL; a generic name searches the library list (rzajqudfassocjrn, 7.5).
        if args["RECEIVER_LIBRARY"] == "*LIBL" and receiver_name == "*ALL":
            raise RoutineError(-443, "38501", f"Value {receiver_name} not valid with receiver library *LIBL.")
        journal = p.journals.get(qualified(journal_library, journal_name))
        if journal is None:
            raise RoutineError(-443, "38501", f"Object {journal_name} in {journal_library} type *JRN not found.")
        if args["RECEIVER_LIBRARY"] == "*LIBL" and receiver_name.endswith("*"):
            receiver_libraries = [lib for lib in LIBRARY_LIST if lib in p.libraries]
        else:
            receiver_library = self._library(args["RECEIVER_LIBRARY"], "*JRNRCV", receiver_name)
            if receiver_library not in p.libraries:
                raise RoutineError(-443, "38501", f"Library {receiver_library} not found.")
            receiver_libraries = [receiver_library]
        return [
            {"JOURNAL_RECEIVER_LIBRARY": r.library, "JOURNAL_RECEIVER_NAME": r.name, "ASSOCIATION_STATUS": "ASSOCIATED"}
            for r in jrn.associate_receivers(p, journal, receiver_libraries, receiver_name)
        ]

    # --- the release's catalog, the system ASP, the user profile (#13) ---------------------------------------

    def service_columns(self, service: str, columns: tuple[str, ...]) -> tuple[str, ...] | None:
        """The columns of a view or table function this partition's release has; None when it lacks the service."""
        return releases.columns_on(self.partition.release, service, columns, self.partition.db2_group_level)

    def _syscolumns(self) -> Iterator[dict]:
        from mqjournal.sim.db2views import VIEWS

        for view, columns in VIEWS.items():
            present = self.service_columns(view, tuple(columns))
            schema, name = view.split(".")
            for position, column in enumerate(present or (), start=1):
                db2type = columns[column]
                yield {
                    "COLUMN_NAME": column,
                    "TABLE_NAME": name,
                    "TABLE_OWNER": "QSYS",
                    "ORDINAL_POSITION": position,
                    "DATA_TYPE": db2type.name[:8],
                    "LENGTH": db2type.length or None,
                    "NUMERIC_SCALE": db2type.scale if db2type.numeric else None,
                    "IS_NULLABLE": "Y",
                    "TABLE_SCHEMA": schema,
                }

    def _sysroutines(self) -> Iterator[dict]:
        for function in sorted(releases.TABLE_FUNCTION_NAMES):
            if releases.service_available(self.partition.release, function, self.partition.db2_group_level):
                schema, name = function.split(".")
                yield {
                    "SPECIFIC_SCHEMA": schema,
                    "SPECIFIC_NAME": name,
                    "ROUTINE_SCHEMA": schema,
                    "ROUTINE_NAME": name,
                    "ROUTINE_TYPE": "FUNCTION",
                    "FUNCTION_TYPE": "T",
                }

    def asp_used_bytes(self) -> int:
        p = self.partition
        return (
            p.asp_other_used_bytes
            + sum(r.size_bytes for r in p.receivers.values())
            + sum(s.size_bytes for s in p.save_files.values())
        )

    def _asp_info(self) -> Iterator[dict]:
        """The system ASP; its capacities in megabytes, as ASP_INFO gives them. A full ASP (faults.asp_full) has
        none left."""
        p = self.partition
        mb = 2**20
        available = 0 if p.faults.asp_full else max(0, p.asp_capacity_bytes - self.asp_used_bytes())
        yield {
            "DEVICE_DESCRIPTION_NAME": None,
            "ASP_NUMBER": 1,
            "ASP_STATE": "NONE",
            "ASP_TYPE": "SYSTEM",
            "RDB_NAME": p.rdb_name(),
            "NUMBER_OF_DISK_UNITS": 4,
            "TOTAL_CAPACITY": p.asp_capacity_bytes // mb,
            "TOTAL_CAPACITY_AVAILABLE": available // mb,
        }

    def _user_info(self) -> Iterator[dict]:
        """USER_INFO as the signed-on user sees it: its own profile, under every name that signs on (the simulator
        keeps one profile template; the query names the user)."""
        profile = self.partition.user_profile
        for name in self.partition.signed_on_users or ["MQADMIN"]:
            yield {
                "AUTHORIZATION_NAME": name,
                "STATUS": profile.status,
                "SPECIAL_AUTHORITIES": " ".join(profile.special_authorities) or None,
                "GROUP_PROFILE_NAME": profile.group_profile or "*NONE",
                "SUPPLEMENTAL_GROUP_COUNT": len(profile.supplemental_groups),
                "SUPPLEMENTAL_GROUP_LIST": " ".join(profile.supplemental_groups) or None,
            }

    def _env_sys_info(self) -> Iterator[dict]:
        version, release = self.partition.release.split(".")
        yield {"OS_NAME": "IBM i", "OS_VERSION": version, "OS_RELEASE": release, "HOST_NAME": self.partition.name}

    def _group_ptf_info(self) -> Iterator[dict]:
        """The release's Db2 PTF group, installed at the partition's level (the only group the simulator models)."""
        release = self.partition.release
        level = self.partition.db2_group_level
        yield {
            "PTF_GROUP_NAME": releases.PTF_GROUPS[release],
            "PTF_GROUP_DESCRIPTION": "DB2 FOR IBM I",
            "PTF_GROUP_LEVEL": releases.LATEST_DB2_LEVEL[release] if level is None else level,
            "PTF_GROUP_TARGET_RELEASE": f"V{release[0]}R{release[2]}M0",
            "PTF_GROUP_STATUS": "INSTALLED",
        }

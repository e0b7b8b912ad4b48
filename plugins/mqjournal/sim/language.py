"""Message texts in the job's language, date format and separators, made from the replacement data as IBM i does.

IBM i stores a message as its ID and replacement data and makes the first-level text when it is shown, from the
message description of the job's language (a national-language version of QCPFMSG / AMQMSG), formatting *DTS fields
in the job's date format (DATFMT) and separators (DATSEP, TIMSEP). So `system` output and MESSAGE_TEXT differ from
partition to partition while MESSAGE_TOKENS does not. Captures show texts in the job's language, e.g.
``CPF9801: Objekt QCPTOIMPF in Bibliothek QSYS nicht gefunden.`` and ``CPF2111: Bibliothek ILEDITOR bereits
vorhanden.`` (codefori/vscode-ibmi issues #879 and #1719), Italian ones in #974 and #465.

German texts: each says whether it was seen in a public capture ("verified") or is an assumed translation. A message
without a German text here is shown in English (the simulator's shortcut; a German partition has them all).

*DTS is shown as the date in DATFMT with DATSEP, a blank, and the time hh:mm:ss with TIMSEP: *YMD yy-mm-dd,
*MDY mm-dd-yy, *DMY dd-mm-yy, *JUL yy-ddd (DATFMT values and their two-digit years: CL reference, CHGJOB DATFMT;
showing *DTS this way in message text is assumed).
"""

from __future__ import annotations

import re
import struct
from datetime import datetime, tzinfo

from mqjournal import mqmessages
from mqjournal.mqmessages import Field

# The system CCSID (QCCSID) a partition of each language has: 37 US English, 273 German (IBM i globalization,
# "CCSID values": the EBCDIC CCSID of each national-language version; assumed for a simulated partition).
CCSIDS = {"ENU": 37, "DEU": 273}

_PLACEHOLDER = re.compile(r"&(\d+)")

# (text, status): "verified <source>" or "assumed translation".
_VSCODE_879 = "verified: codefori/vscode-ibmi issue #879 (German CPF9801/CPF2111 captures)"
_VSCODE_1719 = "verified pattern: codefori/vscode-ibmi issue #1719 ('CPC2206: Eigentumsrecht für Objekt ... geändert.')"
_ASSUMED = "assumed translation"

GERMAN: dict[str, tuple[str, str]] = {
    "CPF0001": ("Fehler bei Befehl &1 gefunden.", _ASSUMED),
    "CPF0006": ("Fehler im Befehl aufgetreten.", _ASSUMED),
    "CPD0030": ("Befehl &1 in Bibliothek &2 nicht gefunden.", _ASSUMED),
    "CPD0043": ("Schlüsselwort &1 für diesen Befehl nicht gültig.", _ASSUMED),
    "CPD0084": ("&3 für Parameter &2 nicht gültig.", _ASSUMED),
    "CPD0078": ("Wert '&1' für Parameter &2 ist kein gültiger Name.", _ASSUMED),
    "CPD0071": ("Parameter &1 erforderlich.", _ASSUMED),
    "CPF2105": ("Objekt &1 in &2 Art *&3 nicht gefunden.", _ASSUMED),
    "CPF9801": ("Objekt &2 in Bibliothek &3 nicht gefunden.", _VSCODE_879),
    "CPF2110": ("Bibliothek &1 nicht gefunden.", _ASSUMED),
    "CPF9810": ("Bibliothek &1 nicht gefunden.", _ASSUMED),
    "CPF9812": ("Datei &1 in Bibliothek &2 nicht gefunden.", _ASSUMED),
    "CPF2189": ("Keine Berechtigung für Objekt &1 in &2 Art *&3.", _ASSUMED),
    "CPF9802": ("Keine Berechtigung für Objekt &2 in &3.", _ASSUMED),
    "CPF2182": ("Keine Berechtigung für Bibliothek &1.", _ASSUMED),
    "CPF9820": ("Keine Berechtigung zur Verwendung von Bibliothek &1.", _ASSUMED),
    "CPF1002": ("Objekt &1 kann nicht zugeordnet werden.", _ASSUMED),
    "CPF9803": ("Objekt &2 in Bibliothek &3 kann nicht zugeordnet werden.", _ASSUMED),
    "CPF3202": ("Datei &1 in Bibliothek &2 wird bereits verwendet.", _ASSUMED),
    "CPF2111": ("Bibliothek &1 bereits vorhanden.", _VSCODE_879),
    "CPF2112": ("Objekt &1 in &2 Art *&3 bereits vorhanden.", _ASSUMED),
    "CPA7025": ("Empfänger &1 in &2 nie vollständig gesichert. (I C)", _ASSUMED),
    "CPA705E": ("Empfänger &1 in &2 ist an inaktives fernes Journal angehängt. (I C)", _ASSUMED),
    "CPF2117": ("&4 Objekte der Art *&3 gelöscht. &5 Objekte nicht gelöscht.", _ASSUMED),
    "CPF2125": ("Keine Objekte gelöscht.", _ASSUMED),
    "CPF7021": ("Empfänger &1 in &2 nicht gelöscht.", _ASSUMED),
    "CPF7022": ("Empfänger &1 in &2 ist an Journal &3 in &4 angehängt; Empfänger nicht gelöscht.", _ASSUMED),
    "CPF7024": (
        "Empfänger &1 in &2 nicht gelöscht; Empfänger müssen in der Reihenfolge des Abhängens gelöscht werden.",
        _ASSUMED,
    ),
    "CPF7020": ("Journalempfänger &1 abgehängt.", _ASSUMED),
    "CPI70E3": (
        "Eine systemverwaltete Journaländerung zum Anhängen eines neuen Journalempfängers konnte nicht "
        "ausgeführt werden. Benutzeraktion ist erforderlich, um jetzt einen neuen Journalempfänger "
        "anzuhängen.",
        _ASSUMED,
    ),
    "CPF7010": ("Objekt &1 in &2 Art *&3 bereits vorhanden.", _ASSUMED),
    "CPF7013": ("Empfänger &1 in &2 kann nicht an Journal &3 angehängt werden.", _ASSUMED),
    "CPC7001": ("Empfänger &1 in Bibliothek &2 erstellt.", _ASSUMED),
    "CPC7002": ("Journal &1 in Bibliothek &2 erstellt.", _ASSUMED),
    "CPC7011": ("Empfänger &1 in &2 an Journal &3 in &4 angehängt.", _ASSUMED),
    "CPC2203": ("Eigentumsrecht für Objekt &1 in &2 Art *&3 geändert.", _VSCODE_1719),
    "CPC2201": ("Objektberechtigung erteilt.", _ASSUMED),
    "CPC2191": ("Objekt &1 in &2 Art *&3 gelöscht.", _ASSUMED),
    "CPC2194": ("Bibliothek &1 gelöscht.", _ASSUMED),
    "CPC9801": ("Objekt &2 Art *&5 in Bibliothek &3 erstellt.", _ASSUMED),
    "CPF5813": ("Datei &1 in Bibliothek &2 bereits vorhanden.", _ASSUMED),
    "CPF7302": ("Datei &1 nicht in Bibliothek &2 erstellt.", _ASSUMED),
    "CPC3725": ("Sicherungsdatei &1 in &2 gelöscht.", _ASSUMED),
    "CPC3722": ("&1 Objekte aus Bibliothek &2 gesichert.", _ASSUMED),
    "CPF3770": ("Keine Objekte für Bibliothek &1 gesichert oder zurückgespeichert.", _ASSUMED),
    "CPF3771": ("&1 Objekte aus &2 gesichert. &3 nicht gesichert.", _ASSUMED),
    "CPF3781": ("Bibliothek &1 nicht gefunden.", _ASSUMED),
    "CPF3782": ("Datei &1 in &2 ist keine Sicherungsdatei.", _ASSUMED),
    "CPC3703": ("&1 Objekte aus &2 in &3 zurückgespeichert.", _ASSUMED),
    "CPF3773": ("&1 Objekte zurückgespeichert. &2 nicht in &3 zurückgespeichert.", _ASSUMED),
    "CPF707F": ("Empfänger &1 kann nicht in Bibliothek &2 zurückgespeichert werden.", _ASSUMED),
    "CPF2113": ("Bibliothek &1 kann nicht zugeordnet werden.", _ASSUMED),
    "CPF2114": ("Objekt &1 in &2 Art *&3 kann nicht zugeordnet werden.", _ASSUMED),
    "AMQ7460": (
        "Startpunkt für die Wiederherstellung beim Start. Datum und Uhrzeit &3, Journalempfänger &4 in Bibliothek &5.",
        _ASSUMED,
    ),
    "AMQ7462": (
        "Ältester Eintrag für die Datenträgerwiederherstellung. Datum und Uhrzeit &3, Journalempfänger &4 "
        "in Bibliothek &5.",
        _ASSUMED,
    ),
    "AMQ7432": (
        "IBM MQ-Journaleintrag nicht verfügbar. Journalempfänger ab Datum und Uhrzeit &3 zurückspeichern.",
        _ASSUMED,
    ),
    "AMQ7472": ("Objekt &3, Typ &4 beschädigt.", _ASSUMED),
    "AMQ7086": ("Datenträgerimage für Objekt &3, Typ &4 aufgezeichnet.", _ASSUMED),
    "AMQ7081": ("Objekt &3, Typ &4 wiederhergestellt.", _ASSUMED),
    "AMQ7085": ("Objekt &3, Typ &4 nicht gefunden.", _ASSUMED),
    "AMQ8003": ("IBM MQ-Warteschlangenmanager '&5' mit V&3 gestartet.", _ASSUMED),
    "AMQ8004": ("IBM MQ-Warteschlangenmanager '&5' beendet.", _ASSUMED),
    "AMQ8146": ("IBM MQ-Warteschlangenmanager nicht verfügbar.", _ASSUMED),
    "AMQ8118": ("IBM MQ-Warteschlangenmanager ist nicht vorhanden.", _ASSUMED),
    "AMQ8042": ("IBM MQ-Warteschlangenmanager aktiv.", _ASSUMED),
    "AMQ8147": ("IBM MQ-Objekt &5 nicht gefunden.", _ASSUMED),
}

# A message whose layout is not in mqmessages.LAYOUTS: the simulator stores each token as a *CHAR with a 2-byte
# length (*VARY 2), which IBM i supports for message data; the real layouts of those messages were not checked.
_VARY = "*VARY"


def encode(msg_id: str, tokens: tuple[object, ...]) -> bytes:
    """The replacement data of `msg_id` for `tokens` (token i is &i)."""
    fields = mqmessages.LAYOUTS.get(msg_id)
    if fields is not None:
        return mqmessages.encode(fields, tuple(as_value(t) for t in tokens))
    out = bytearray()
    for t in tokens:
        raw = ("" if t is None else str(t)).encode(mqmessages.CCSID_CODEC, errors="replace")
        out += struct.pack(">H", len(raw)) + raw
    return bytes(out)


def as_value(token: object) -> mqmessages.Value:
    if token is None or isinstance(token, (str, int, datetime)):
        return token
    return str(token)


def _fields(msg_id: str, data: bytes) -> list[tuple[Field | None, object]]:
    fields = mqmessages.LAYOUTS.get(msg_id)
    if fields is not None:
        values = mqmessages.decode(fields, data) or ()
        return list(zip(fields, values, strict=False))
    found: list[tuple[Field | None, object]] = []
    at = 0
    while at + 2 <= len(data):
        (n,) = struct.unpack(">H", data[at : at + 2])
        found.append((None, data[at + 2 : at + 2 + n].decode(mqmessages.CCSID_CODEC)))
        at += 2 + n
    return found


def text(msg_id: str, data: bytes, english: str, job: JobFormat) -> str:
    """The first-level text of `msg_id` in the job's language, its tokens from `data`."""
    template = GERMAN[msg_id][0] if job.language == "DEU" and msg_id in GERMAN else english
    values = _fields(msg_id, data)

    def fill(m: re.Match[str]) -> str:
        i = int(m.group(1))
        if not 1 <= i <= len(values):
            return ""
        field, value = values[i - 1]
        if isinstance(value, datetime):
            return job.timestamp(value)
        if field is not None and field.type == "*BIN" and value == 0:
            return ""  # MQ's unused numeric inserts
        return str(value)

    return _PLACEHOLDER.sub(fill, template)


class JobFormat:
    """How the job shows text: language (LANGID: ENU/DEU), DATFMT, DATSEP, TIMSEP, and the partition's time zone
    (None: a time is shown in its own offset)."""

    ENGLISH: JobFormat

    def __init__(
        self, language: str, date_format: str, date_separator: str, time_separator: str, tz: tzinfo | None = None
    ) -> None:
        self.language = language
        self.date_format = date_format
        self.date_separator = date_separator
        self.time_separator = time_separator
        self.tz = tz

    def _local(self, moment: datetime) -> datetime:
        return moment.astimezone(self.tz) if self.tz is not None else moment

    def date(self, moment: datetime) -> str:
        local = self._local(moment)
        yy, mm, dd, s = f"{local.year % 100:02d}", f"{local.month:02d}", f"{local.day:02d}", self.date_separator
        if self.date_format == "*MDY":
            return f"{mm}{s}{dd}{s}{yy}"
        if self.date_format == "*DMY":
            return f"{dd}{s}{mm}{s}{yy}"
        if self.date_format == "*JUL":
            return f"{yy}{s}{local.timetuple().tm_yday:03d}"
        return f"{yy}{s}{mm}{s}{dd}"

    def time(self, moment: datetime) -> str:
        local = self._local(moment)
        return self.time_separator.join(f"{v:02d}" for v in (local.hour, local.minute, local.second))

    def timestamp(self, moment: datetime) -> str:
        return f"{self.date(moment)} {self.time(moment)}"


JobFormat.ENGLISH = JobFormat("ENU", "*YMD", "-", ":")

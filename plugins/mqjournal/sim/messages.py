"""The message catalogue of the simulated IBM i partition: IBM i (QCPFMSG) and IBM MQ (AMQMSG) messages.

Every entry carries the message ID, type, severity and first-level text with IBM's ``&n`` substitution
variables, plus ``verified`` and a short ``source`` note. ``verified=True`` means the ID *and* its
first-level wording were seen in IBM documentation or in public code/logs that quote the real message;
type and severity follow IBM conventions (escape CPF = 40, CL syntax diagnostics CPD = 30, completion
CPC = 0, inquiry = 99) unless the source says otherwise. ``verified=False`` means the entry was inferred
(ID, wording or insert layout) and must be checked on a real system, e.g. with
``DSPMSGD RANGE(CPF7000 CPF70FF) MSGF(QSYS/QCPFMSG)`` or ``DSPMSGD ... MSGF(QMQM/AMQMSG)``.

How the PASE ``system`` utility reports messages (what the simulator's shell must reproduce)
-------------------------------------------------------------------------------------------
* ``/QOpenSys/usr/bin/system [-beEhiIkKnOpqsv] CL-command``: spooled output goes to stdout; "any
  messages sent by the command are written to standard output or standard error (depending on whether
  the CL command sends an exception message)".  IBM Docs, *IBM PASE for i system utility*
  (https://www.ibm.com/docs/en/i/7.4?topic=utilities-pase-i-system-utility; same wording in the V5R4
  information center, rzalc ``pase_system.htm``).
* Each message is one line ``MSGID: first-level text``, e.g. ``CPF2105: Object X in Y type *JRNRCV not
  found.``; ``-n`` drops the ``MSGID:`` prefix.  Documented for the Qshell ``system`` utility
  (https://ibm.com/support/knowledgecenter/ssw_ibm_i_72/rzahz/rzahzsystem.htm, which sends *all*
  messages to stderr) and seen in PASE ``system`` output quoted by IBM/ansible-for-i.
* Observed split: the early ``ibmi_object_save`` module of IBM/ansible-for-i ran
  ``module.run_command(['system', cmd])`` and documents stdout ``CPC3722: 2 objects saved from library
  objlib.`` on success, and stderr ``CPF5813: File archive in library archlib already exists.\\n
  CPF7302: File archive not created in library archlib.\\n`` on failure.  So when the command ends in
  an escape message, the diagnostics that precede it go to stderr too; the module tests ``rc == 0`` for
  success and ``'CPF5813' in stderr`` to detect the existing save file.
* Exit status: 0 when the command completes without an escape message, non-zero when it ends with one.
  The exact value is not in the retrieved IBM text.  IBM/ansible-for-i samples show ``rc: 255`` for
  failed commands (e.g. stderr ``CPF9801: Object QNOTE in library L10010125P not found``), but 255 is
  also that collection's own IBMi_COMMAND_RC_ERROR constant for its itoolkit path, so it proves little;
  ILE C ``system()`` returns 1 on failure; Qshell ``system -i`` returns the ILE return code.  The
  simulator uses 255 (unverified); clients should treat any non-zero status as failure and key off the
  message IDs on stderr.
* Inquiry messages (CPA7025, CPA705E) are not printed: in a non-interactive job they go to QSYSOPR and
  the job waits in MSGW unless a reply is automatic (DLTOPT(*IGNINQMSG), INQMSGRPY(*DFT|*SYSRPYL)).
  DLTJRNRCV restrictions: http://www.setgetweb.com/p/iSeries/v5r3/dltjrnrc.htm.

IBM MQ messages (AMQ7460, AMQ7462, AMQ7432, AMQ7472, ...) are not printed by ``system`` for journal
commands; MQ sends them to the QMQMMSG message queue in the queue manager library.  MQ messages have at
most five inserts: ``<insert_1>``/``<insert_2>`` are numbers (ArithInsert1/2) and ``<insert_3>`` to
``<insert_5>`` are strings (CommentInsert1/2/3); real log lines confirm the mapping, e.g.
``AMQ8004I: IBM MQ queue manager 'QM1' ended. [CommentInsert3(QM1)]`` and ``AMQ7229I: 4 log records
accessed on queue manager 'QM1' ... [ArithInsert1(4), CommentInsert1(QM1)]``.  Here they are written as
``&1``..``&5`` as in the IBM i message file AMQMSG.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from mqjournal.sim import language
from mqjournal.sim.language import JobFormat

MESSAGE_TYPES: Final = frozenset({"ESCAPE", "DIAGNOSTIC", "COMPLETION", "INFORMATIONAL", "INQUIRY"})

_PLACEHOLDER = re.compile(r"&(\d+)")


@dataclass(frozen=True)
class MessageDef:
    """A message description as the catalogue holds it."""

    id: str
    type: str  # "ESCAPE" | "DIAGNOSTIC" | "COMPLETION" | "INFORMATIONAL" | "INQUIRY"
    severity: int
    text: str  # first-level text with &1 &2 ... placeholders as IBM documents them
    verified: bool
    source: str


@dataclass(frozen=True)
class Message:
    """One message as sent: placeholders filled (English, *YMD) in `text`; `data` is its replacement data, the same
    in every language, from which `language.text` makes the text the job sees."""

    id: str
    type: str
    severity: int
    text: str
    data: bytes = field(default=b"", compare=False)

    def shown(self, job: JobFormat) -> str:
        """The first-level text in `job`'s language and date format."""
        return language.text(self.id, self.data, CATALOG[self.id].text, job) if self.id in CATALOG else self.text


# Short source keys, expanded in the notes below.
_ANSIBLE = "IBM/ansible-for-i plugins/modules/ibmi_object_save.py, ibmi_object_restore.py (RETURN samples)"
_I2CLASS = "rapidtk/i2class-java com/i2class/msgf/QCPFMSG.java (copy of QCPFMSG descriptions with severities)"
_JTOPEN = "IBM/JTOpen (jt400) source comments, e.g. ObjectDescription.java, DataQueue native impl"
_ASUP_IT = "smeup/asup org.smeup.sys.os.type.base.api.ObjectMover (Italian QCPFMSG texts)"
_DLTJRNRCV = "http://www.setgetweb.com/p/iSeries/v5r3/dltjrnrc.htm (DLTJRNRCV restrictions)"
_JRNMSGQ = "https://www.ibm.com/support/knowledgecenter/ssw_ibm_i_72/rzaki/rzakiwrkjrnmsg.htm"
_MQJRN = "https://www.ibm.com/support/knowledgecenter/SSFKSJ_9.0.0/com.ibm.mq.adm.doc/q021850_.htm"
_INATIVE = (
    "public iNative capture document 'Especificaciones de Compilador IBM i' (PUB400, V7R5, `system -b` "
    "CRTBNDRPG): stdout empty, stderr 'CPD0074: Value 'WARNING_TE' for PGM exceeds 10 characters.' then "
    "'CPF0006: Errors occurred in command.', exit code 255"
)
_CPD0030_DE = (
    "German capture in a public Python deploy tool log: stderr 'CPD0030: Befehl UND in Bibliothek *LIBL "
    "nicht gefunden.\\nCPF0006: Im Befehl ist ein Fehler aufgetreten.'"
)
_DLTJRNRCV_IDS = (
    _DLTJRNRCV + " and http://www.goto400.com/clcommand/DLTJRNRCV.htm (the restriction is "
    "verified). Sent as a diagnostic followed by escape CPF2125, the shape of IBM i's DLT commands (issue #29); "
    "the ID, wording and that shape are the simulator's: the command's 'Error messages' list was not retrievable "
    "here, and no public capture of this refusal was found"
)


def _m(id: str, type: str, severity: int, text: str, verified: bool, source: str) -> MessageDef:
    return MessageDef(id=id, type=type, severity=severity, text=text, verified=verified, source=source)


_DEFS: tuple[MessageDef, ...] = (
    # ---------------------------------------------------------------- CL in general
    # CPF0001 is not what `system` ends a syntax error with (that is CPF0006); kept for completeness of QCPFMSG.
    _m("CPF0001", "ESCAPE", 30, "Error found on &1 command.", True, _I2CLASS),
    _m(
        "CPF0006",
        "ESCAPE",
        30,
        "Errors occurred in command.",
        True,
        _INATIVE + "; " + _CPD0030_DE + "; " + _I2CLASS + ". The escape `system` ends every CL syntax error with",
    ),
    _m(
        "CPD0030",
        "DIAGNOSTIC",
        30,
        "Command &1 in library &2 not found.",
        True,
        "real-machine transcript 'CPD0030: Command REVOKE in library *LIBL not found.' (public IBM i course); "
        + _CPD0030_DE,
    ),
    _m(
        "CPD0043",
        "DIAGNOSTIC",
        30,
        "Keyword &1 not valid for this command.",
        True,
        "IBM/ansible-for-i plugins/modules/ibmi_download_fix.py RETURN sample: stderr 'CPD0043: Keyword LOGOUTPUT "
        "not valid for this command.', rc 255",
    ),
    _m(
        "CPD0074",
        "DIAGNOSTIC",
        30,
        "Value '&1' for &2 exceeds &3 characters.",
        True,
        _INATIVE + " (the value is cut to the parameter's length; insert numbering assumed)",
    ),
    _m(
        "CPD0084",
        "DIAGNOSTIC",
        30,
        "&3 not valid for parameter &2.",
        False,
        "ID for a value not valid for a parameter: IBM/JTOpen User tests expect 'CPD0084' for a bad special value; "
        + _ASUP_IT
        + " ('Il valore &3 non e valido per il parametro &2'); English wording inferred",
    ),
    _m(
        "CPD0003",
        "DIAGNOSTIC",
        30,
        "Value '&1' exceeds positional limit of &2.",
        False,
        "more positional values than the command defines; ID and wording from memory, not retrieved",
    ),
    _m(
        "CPD0012",
        "DIAGNOSTIC",
        30,
        "Parameter &1 specified more than once.",
        False,
        "a keyword given twice (or positionally and by keyword); ID and wording from memory, not retrieved",
    ),
    # The command analyzer's own syntax diagnostics (clparse.py raises them). Real IBM i sends a CPD message before
    # CPF0006 for every syntax error (captures in tests/conformance); these IDs and wordings were not found in a
    # public source: check with DSPMSGD RANGE(CPD0010 CPD0020) MSGF(QSYS/QCPFMSG).
    _m("CPD0010", "DIAGNOSTIC", 30, "Closing apostrophe missing.", False, "ID and wording assumed, not retrieved"),
    _m("CPD0011", "DIAGNOSTIC", 30, "Closing parenthesis missing.", False, "ID and wording assumed, not retrieved"),
    _m(
        "CPD0013",
        "DIAGNOSTIC",
        30,
        "Positional value &1 not valid here.",
        False,
        "ID and wording assumed, not retrieved",
    ),
    _m("CPD0020", "DIAGNOSTIC", 30, "Command name missing.", False, "ID and wording assumed, not retrieved"),
    _m("CPD0078", "DIAGNOSTIC", 30, "Value '&1' for parameter &2 not a valid name.", False, "inferred; not retrieved"),
    _m("CPF2105", "ESCAPE", 40, "Object &1 in &2 type *&3 not found.", True, _I2CLASS + "; " + _JTOPEN),
    _m(
        "CPF9801",
        "ESCAPE",
        40,
        "Object &2 in library &3 not found.",
        True,
        _I2CLASS + "; " + _JTOPEN + ". Also sent by the simulator's STRMQM when the journal is gone (use unverified)",
    ),
    _m("CPF2110", "ESCAPE", 40, "Library &1 not found.", True, _ASUP_IT + " ('Libreria &1 non trovata')"),
    _m(
        "CPF9810",
        "ESCAPE",
        40,
        "Library &1 not found.",
        True,
        _JTOPEN + ". Also sent by the simulator's STRMQM when the queue manager library is gone (that use unverified)",
    ),
    _m("CPF9812", "ESCAPE", 40, "File &1 in library &2 not found.", True, _I2CLASS + "; " + _ANSIBLE),
    _m("CPF2189", "ESCAPE", 40, "Not authorized to object &1 in &2 type *&3.", True, _JTOPEN),
    _m("CPF9802", "ESCAPE", 40, "Not authorized to object &2 in &3.", True, _JTOPEN),
    _m("CPF2182", "ESCAPE", 40, "Not authorized to library &1.", True, _JTOPEN),
    _m("CPF9820", "ESCAPE", 40, "Not authorized to use library &1.", True, _JTOPEN),
    _m("CPF1002", "ESCAPE", 40, "Cannot allocate object &1.", True, _I2CLASS + " (ALCOBJ)"),
    _m(
        "CPF9803",
        "ESCAPE",
        40,
        "Cannot allocate object &2 in library &3.",
        False,
        "ID in escape lists of smeup/asup command stubs; wording inferred from CPF9801/CPF9802 pattern. Also used "
        "for RSTLIB of a running queue manager's library (guess)",
    ),
    _m(
        "CPF3202",
        "ESCAPE",
        40,
        "File &1 in library &2 in use.",
        False,
        "IBM/JTOpen test noise list ('file in use'); wording inferred",
    ),
    _m("CPF2112", "ESCAPE", 40, "Object &1 in &2 type *&3 already exists.", True, _I2CLASS),
    # ---------------------------------------------------------------- DLTJRNRCV
    _m(
        "CPA7025",
        "INQUIRY",
        99,
        "Receiver &1 in &2 never fully saved. (I C)",
        True,
        _DLTJRNRCV + "; text quoted by Zabbix AS400 template (QSYSOPR trigger, severity >= 70)",
    ),
    _m(
        "CPA705E",
        "INQUIRY",
        99,
        "Receiver &1 in &2 attached to inactive remote journal. (I C)",
        False,
        _DLTJRNRCV + " (ID and meaning); wording inferred",
    ),
    _m(
        "CPF2117",
        "ESCAPE",
        40,
        "&4 objects type *&3 deleted. &5 objects not deleted.",
        False,
        "generic delete summary used by DLT* commands; ID in fact notes, wording from memory",
    ),
    _m(
        "CPF2125",
        "ESCAPE",
        40,
        "No objects deleted.",
        True,
        "IBM/JTOpen test noise list 'CPF2125:  No objects deleted.'; MONMSG CPF2125 after DLTJRNRCV in public CL. "
        "The simulator ends every refused DLTJRNRCV with it, after the diagnostic giving the reason (assumed)",
    ),
    _m(
        "CPF7021",
        "DIAGNOSTIC",
        40,
        "Receiver &1 in &2 not deleted.",
        False,
        "sent after CPA7025 is answered C (cancel): the cancel is documented with CPA7025 (" + _DLTJRNRCV + "); "
        "ID and wording ASSUMED, not found in public sources",
    ),
    _m(
        "CPF7022",
        "DIAGNOSTIC",
        40,
        "Receiver &1 in &2 attached to journal &3 in &4; receiver not deleted.",
        False,
        "receiver attached to a local journal: " + _DLTJRNRCV_IDS,
    ),
    _m(
        "CPF7024",
        "DIAGNOSTIC",
        40,
        "Receiver &1 in &2 not deleted; receivers must be deleted in the order detached.",
        False,
        "receiver in the middle of the chain of online receivers (refused unless it or its dual is damaged): "
        + _DLTJRNRCV_IDS,
    ),
    _m(
        "CPI70E6",
        "INFORMATIONAL",
        0,
        "A journal receiver was not available. The reason code may indicate that an exit program is preventing "
        "deletion of journal receiver &1 in &2.",
        False,
        _JRNMSGQ + " (description only; first-level text and inserts not retrieved)",
    ),
    # ---------------------------------------------------------------- CHGJRN / CRTJRNRCV
    _m(
        "CPF7020",
        "INFORMATIONAL",
        0,
        "Journal receivers &1 detached.",
        False,
        "IBM/JTOpen noise list starts 'CPF7020:  Journal receivers'; rest inferred. Sent to the journal "
        "message queue when the system changes receivers (rzakijrnmssgque)",
    ),
    _m(
        "CPF7019",
        "INFORMATIONAL",
        0,
        "Journal &1 in &2 sequence number &3 approaching maximum; reset the sequence number.",
        False,
        "https://www.ibm.com/support/knowledgecenter/ssw_ibm_i_71/cl/chgjrn.htm (ID and purpose); wording inferred",
    ),
    _m(
        "CPI70E3",
        "INFORMATIONAL",
        40,
        "A system managed change journal operation to attach a new journal receiver could not be accomplished. "
        "User action is required to attach a new journal receiver at this time.",
        True,
        _JRNMSGQ + " (first-level text, no journal name in it); MQ doc writes 'CPI7OE3' to QSYSOPR; the journal and "
        "library are replacement data (&1, &2: layout assumed, mqmessages.py); severity inferred",
    ),
    _m(
        "CPF701B",
        "ESCAPE",
        40,
        "Journal recovery of interrupted operation failed.",
        False,
        "ID in CHGOBJOWN escape list (smeup/asup QSYCHONR); wording from memory",
    ),
    _m(
        "CPF7010",
        "ESCAPE",
        40,
        "Object &1 in &2 type *&3 already exists.",
        False,
        "IBM/JTOpen DDM test: CRTJRNRCV of an existing receiver returns CPF7010; wording inferred",
    ),
    _m(
        "CPF7013",
        "ESCAPE",
        40,
        "Receiver &1 in &2 not eligible for attach to journal &3.",
        False,
        "ID in smeup/asup QSYCHONR escape list; wording inferred (receiver already used / attached elsewhere)",
    ),
    _m("CPC7001", "COMPLETION", 0, "Receiver &1 created in library &2.", False, "ID and wording inferred"),
    _m(
        "CPC7011",
        "COMPLETION",
        0,
        "Receiver &1 in &2 attached to journal &3 in &4.",
        False,
        "ID and wording inferred (CHGJRN completion)",
    ),
    _m(
        "CPC2203",
        "COMPLETION",
        0,
        "Ownership of object &1 in &2 type *&3 changed.",
        False,
        "ID guessed (CPC2201 is 'Object authority granted.', GRTOBJAUT, per IBM/JTOpen noise list)",
    ),
    _m(
        "CPC2201",
        "COMPLETION",
        0,
        "Object authority granted.",
        True,
        "IBM/JTOpen test noise list 'CPC2201:  Object authority granted.' (GRTOBJAUT, not CHGOBJOWN)",
    ),
    # ---------------------------------------------------------------- CRTSAVF / CLRSAVF
    _m(
        "CPC9801",
        "COMPLETION",
        0,
        "Object &2 type *&5 created in library &3.",
        True,
        _I2CLASS + " (note the insert numbers: &2 name, &3 library, &5 type)",
    ),
    _m(
        "CPF5813",
        "DIAGNOSTIC",
        40,
        "File &1 in library &2 already exists.",
        True,
        _ANSIBLE + " (precedes CPF7302 on stderr)",
    ),
    _m("CPF7302", "ESCAPE", 40, "File &1 not created in library &2.", True, _ANSIBLE),
    _m("CPC3725", "COMPLETION", 0, "Save file &1 in &2 cleared.", False, "ID and wording inferred (CLRSAVF)"),
    # ---------------------------------------------------------------- SAVOBJ to *SAVF
    _m("CPC3722", "COMPLETION", 0, "&1 objects saved from library &2.", True, _ANSIBLE),
    _m(
        "CPF3770",
        "ESCAPE",
        40,
        "No objects saved or restored for library &1.",
        False,
        "ID in SAVOBJ escape list (smeup/asup QSRSOCPR); public test fixture 'CPF3770: No objects saved or "
        "restored.'; 'for library &1' inferred",
    ),
    _m(
        "CPF3771",
        "ESCAPE",
        40,
        "&1 objects saved from &2. &3 not saved.",
        False,
        "ID in SAVOBJ escape list (smeup/asup QSRSOCPR); wording inferred from CPF3773 pattern. A partial save of "
        "one library to media; not sent for a save file (that is CPF3701)",
    ),
    _m(
        "CPF3701",
        "ESCAPE",
        40,
        "&1 objects saved from &2. &3 not saved.",
        False,
        "the escape of a partial save to a save file: 'CPF3771 for single libraries, CPF3751/CPF3778 for more than "
        "one library, and CPF3701 for save operations to save files' "
        "(https://www.ibm.com/support/knowledgecenter/ssw_ibm_i_72/rzaiu/rzaiusavecomplete.htm; ID and use "
        "verified); wording assumed like CPF3771's",
    ),
    _m(
        "CPF3758",
        "DIAGNOSTIC",
        20,
        "Receiver &1 in &2 saved while attached to journal &3 in &4.",
        False,
        "IBM: 'If you save a journal receiver that is currently attached, you receive a diagnostic message' "
        "(IBM i Saving journals and journal receivers, rzaiu; http://setgetweb.com/p/i5/rzaiurzaiu135.htm): the "
        "diagnostic is verified, its ID and wording are NOT (not found in public sources): the simulator's "
        "placeholder. Clients must judge the save by its exit status and completion message, not by this ID",
    ),
    _m("CPF3781", "ESCAPE", 40, "Library &1 not found.", False, "ID in SAVOBJ escape list; wording inferred"),
    _m("CPF3782", "ESCAPE", 40, "File &1 in &2 not a save file.", False, "ID in SAVOBJ escape list; wording inferred"),
    _m(
        "CPA4067",
        "INQUIRY",
        99,
        "Save file &2 in &3 contains data. (C G)",
        False,
        "ID suggested by the brief; wording inferred (CLEAR(*NONE) on a non-empty save file)",
    ),
    # ---------------------------------------------------------------- RSTOBJ from *SAVF
    _m("CPC3703", "COMPLETION", 0, "&1 objects restored from &2 to &3.", True, _ANSIBLE),
    # SAV and RST of an IFS directory (sim/qmgrdir.py): the IDs and texts are the simulator's guesses.
    _m("CPC370C", "COMPLETION", 0, "&1 objects saved.", False, "simulator's guess for SAV's completion"),
    _m("CPC370D", "COMPLETION", 0, "&1 objects restored.", False, "simulator's guess for RST's completion"),
    _m("CPFA0A9", "ESCAPE", 40, "Object not found.  Object is &1.", False, "simulator's guess (IFS object missing)"),
    _m("CPFA09E", "ESCAPE", 40, "Object in use.  Object is &1.", False, "simulator's guess (IFS object in use)"),
    # CPYTOSTMF (sim/streamfiles.cpytostmf): a diagnostic naming the object, then CPFA097 naming FROMMBR.
    _m(
        "CPFA097",
        "ESCAPE",
        40,
        "Object not copied.  Object is &1.",
        True,
        "a capture of CPYTOSTMF to a missing directory: 'CPFA0A9: Object not found.  Object is <stmf>.' then "
        "'CPFA097: Object not copied.  Object is /QSYS.LIB/...MBR.' (github.com/IBM/ibmi-tobi/issues/305)",
    ),
    _m(
        "CPFA09C",
        "ESCAPE",
        40,
        "Not authorized to object.  Object is &1.",
        False,
        "ID and 'Not authorized to object.' listed as an IBM i message by TIBCO MFT for IBM i (docs.tibco.com "
        "mftps-ibmi FUSUTIL Monitoring Messages); 'Object is &1.' inferred from CPFA0A9",
    ),
    _m("CPFA0A0", "ESCAPE", 40, "Object already exists.  Object is &1.", False, "simulator's guess"),
    _m(
        "CPF3773",
        "ESCAPE",
        40,
        "&1 objects restored. &2 not restored to &3.",
        False,
        "prefix '&1 objects restored. &2 not restored' quoted in public code; 'to &3' inferred",
    ),
    _m(
        "CPF3780",
        "ESCAPE",
        40,
        "Specified file for library &1 not found.",
        False,
        "ID suggested by the brief; wording inferred",
    ),
    _m(
        "CPF707F",
        "DIAGNOSTIC",
        40,
        "Cannot restore receiver &1 into library &2.",
        True,
        "https://consolut.com/saphelp-en?article=XH-CPF707F (IBM QCPFMSG text); type inferred",
    ),
    # ---------------------------------------------------------------- IBM MQ (QMQMMSG, STRMQM/ENDMQM output)
    _m(
        "AMQ7460",
        "INFORMATIONAL",
        0,
        "Startup recovery point. Date and time &3, journal receiver &4 in library &5.",
        False,
        _MQJRN + " ('AMQ7460 Startup recovery point'); insert layout invented for the simulator; receiver is "
        "asterisks when it is no longer online",
    ),
    _m(
        "AMQ7462",
        "INFORMATIONAL",
        0,
        "Oldest media recovery entry. Date and time &3, journal receiver &4 in library &5.",
        False,
        _MQJRN + " ('AMQ7462 Oldest media recovery entry'); insert layout invented for the simulator",
    ),
    _m(
        "AMQ7432",
        "INFORMATIONAL",
        0,
        "IBM MQ journal entry not available. Restore journal receivers from date and time &3.",
        False,
        _MQJRN + " (meaning: receiver needed by a recovery pass missing, reports date/time); wording invented",
    ),
    _m(
        "AMQ7472",
        "INFORMATIONAL",
        0,
        "Object &3, type &4 damaged.",
        True,
        "MQSeries Perl ErrorLog descriptions.pl ('Object (name), type (\\w+) damaged.'); "
        "https://www.ibm.com/docs/en/ibm-mq/9.3.x?topic=recovery-recovering-damaged-objects",
    ),
    _m(
        "AMQ7017",
        "ESCAPE",
        40,
        "Log not available.",
        False,
        "distributed MQ message for missing log; use on IBM i (STRMQM failure) inferred",
    ),
    _m(
        "AMQ7086",
        "COMPLETION",
        0,
        "Media image for object &3, type &4 recorded.",
        False,
        "wording from a public rcdmqimg transcript ('Media image for object QL.A, type qlocal recorded.'); "
        "ID from memory",
    ),
    _m(
        "AMQ7081",
        "COMPLETION",
        0,
        "Object &3, type &4 recreated.",
        False,
        "wording from a public rcrmqobj transcript ('Object QL.A, type qlocal recreated.'); ID from memory",
    ),
    _m("AMQ7085", "ESCAPE", 40, "Object &3, type &4 not found.", False, "ID and wording from memory"),
    _m(
        "AMQ8003",
        "COMPLETION",
        0,
        "IBM MQ queue manager '&5' started using V&3.",
        True,
        "AMQ8003I log line 'IBM MQ queue manager 'QM1' started using V9.3.2.0. [CommentInsert1(9.3.2.0), "
        "CommentInsert3(QM1)]' (vdesabou/kafka-docker-playground#7930); IBM i STRMQM wording unverified",
    ),
    _m(
        "AMQ8004",
        "COMPLETION",
        0,
        "IBM MQ queue manager '&5' ended.",
        True,
        "AMQ8004I log line with CommentInsert3 (vdesabou/kafka-docker-playground#7930); MQSeries descriptions.pl",
    ),
    _m(
        "AMQ8146",
        "ESCAPE",
        40,
        "IBM MQ queue manager not available.",
        True,
        "AMQ8146 quoted by several public runmqsc scripts/logs",
    ),
    _m(
        "AMQ8118",
        "ESCAPE",
        40,
        "IBM MQ queue manager does not exist.",
        True,
        "AMQ8118E quoted by public MQ Ansible modules and Go runmqsc wrappers",
    ),
    _m(
        "AMQ8042",
        "ESCAPE",
        40,
        "IBM MQ queue manager running.",
        False,
        "text of strmqm on a running queue manager (public MQ Ansible modules, rc 5); ID not confirmed",
    ),
    _m(
        "AMQ8147",
        "ESCAPE",
        40,
        "IBM MQ object &5 not found.",
        False,
        "AMQ8147 seen in runmqsc transcripts; insert inferred",
    ),
    _m(
        "AMQ6235",
        "ESCAPE",
        40,
        "Directory '&3' missing.",
        False,
        "MQ's AMQ6235 ('Directory ... missing') as remembered from MQ's error logs; not confirmed in a public "
        "source here, nor that STRMQM on IBM i ends with it when the queue manager's IFS directory is gone",
    ),
    # ---------------------------------------------------------------- added with the simulator's commands
    _m(
        "CPF9898",
        "ESCAPE",
        40,
        "&1.",
        True,
        "QCPFMSG's general-purpose escape, used by programs to send their own text",
    ),
    _m("CPC2191", "COMPLETION", 0, "Object &1 in &2 type *&3 deleted.", False, "DLTF/DLTOBJ completion; from memory"),
    _m("CPF9814", "ESCAPE", 40, "Device &1 not found.", False, "from memory"),
    _m(
        "CPD0071",
        "DIAGNOSTIC",
        30,
        "Parameter &1 required.",
        False,
        "a required parameter missing; public validity-checker programs send CPD0071 for an empty required value "
        "(MarcoDeSenas/IBMi-topics-thanks-to-pub400); wording from memory",
    ),
    _m(
        "CPF7062",
        "ESCAPE",
        40,
        "No entries converted or received from journal &1 in library &2.",
        False,
        "DSPJRN with no entry in the range: 'an escape message is sent indicating that fact' "
        "(https://ibm.com/docs/ssw_ibm_i_74/cl/dspjrn.htm); ID and wording from memory",
    ),
    _m(
        "AMQ8559",
        "COMPLETION",
        0,
        "Refresh Cluster accepted.",
        False,
        "MQSC response to REFRESH CLUSTER (RFRMQMCL); from memory, not retrieved",
    ),
    # ---------------------------------------------------------------- libraries, CRTJRN, clusters (recovery work)
    _m("CPC2194", "COMPLETION", 0, "Library &1 deleted.", False, "DLTLIB completion; ID and wording from memory"),
    _m(
        "CPF2113",
        "ESCAPE",
        40,
        "Cannot allocate library &1.",
        True,
        "IBM i CL reference, escape lists of DLTFCT/DSPLIBL (ssw_ibm_i_74 cl). Its use by DLTLIB for a library "
        "of the system or the job's library list (QSYS, QGPL ...) is the simulator's guess",
    ),
    _m(
        "CPF2114",
        "ESCAPE",
        40,
        "Cannot allocate object &1 in &2 type *&3.",
        True,
        "IBM i CL reference, escape list of DLTFCT (ssw_ibm_i_74 cl); used by DLTLIB when a job holds a receiver",
    ),
    _m(
        "CPC7002",
        "COMPLETION",
        0,
        "Journal &1 created in library &2.",
        False,
        "CRTJRN completion; ID and wording inferred",
    ),
    _m(
        "AMQ8005",
        "COMPLETION",
        0,
        "IBM MQ queue manager changed.",
        False,
        "CHGMQM / ALTER QMGR response; ID and wording from memory",
    ),
    _m(
        "AMQ9406",
        "ESCAPE",
        40,
        "REFRESH CLUSTER REPOS(YES) not allowed on a full repository for cluster &3.",
        False,
        "ID from the MQSC REFRESH CLUSTER page ('the command will fail with an error AMQ9406/CSQX406E logged', "
        "https://www.ibm.com/docs/en/SSFKSJ_9.2.0/com.ibm.mq.ref.con.doc/q082360_.html); wording inferred",
    ),
    _m(
        "AMQ9420",
        "ESCAPE",
        40,
        "No repositories for cluster &3.",
        False,
        "ID and wording from memory; used by RFRMQMCL for a cluster the queue manager does not belong to (guess)",
    ),
)

CATALOG: dict[str, MessageDef] = {d.id: d for d in _DEFS}
if len(CATALOG) != len(_DEFS):  # pragma: no cover - guards against a duplicated entry
    raise RuntimeError("duplicate message ID in the catalogue")


def render(msg_id: str, *tokens: object) -> Message:
    """Fill &1..&n of `msg_id`'s first-level text with `tokens` (token i fills &i), and keep them as replacement data.

    A token is a string, a number or an aware datetime (a *DTS field: shown in the job's date format). The data is
    laid out as `mqmessages.LAYOUTS` says for the messages mqjournal reads (see language.encode for the others).
    A placeholder without a token becomes an empty string, as IBM i shows absent message data;
    extra tokens are ignored. Raises KeyError for an ID the catalogue does not hold.
    """
    d = CATALOG[msg_id]
    data = language.encode(msg_id, tokens)
    return Message(
        id=d.id,
        type=d.type,
        severity=d.severity,
        text=language.text(msg_id, data, d.text, JobFormat.ENGLISH),
        data=data,
    )

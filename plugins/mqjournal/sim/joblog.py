"""Messages a simulated command sends: to its caller (the job log `system` prints) and to message queues."""

from __future__ import annotations

from dataclasses import dataclass, field

from mqjournal import mqmessages
from mqjournal.msgformats import parse_declared
from mqjournal.sim import language
from mqjournal.sim.messages import Message, render
from mqjournal.sim.model import MessageType, Partition, QueuedMessage


class CommandError(Exception):
    """A CL command ended with an escape message; `joblog` holds what it sent before that."""

    def __init__(self, escape: Message, joblog: list[Message] | None = None) -> None:
        self.escape = escape
        self.joblog = list(joblog or [])
        super().__init__(f"{escape.id}: {escape.text}")


def escape(msg_id: str, *tokens: object) -> CommandError:
    return CommandError(render(msg_id, *tokens))


@dataclass
class JobLog:
    """The messages one command sends to its caller, in order."""

    messages: list[Message] = field(default_factory=list)

    def send(self, msg_id: str, *tokens: object) -> Message:
        message = render(msg_id, *tokens)
        self.messages.append(message)
        return message


def post(
    partition: Partition,
    library: str,
    queue: str,
    msg_id: str,
    *tokens: object,
    from_program: str = "",
    from_user: str = "QSYS",
) -> QueuedMessage:
    """Put a message on LIBRARY/QUEUE at the partition's current time."""
    message = render(msg_id, *tokens)
    data = message.data
    declared = partition.message_formats.get(msg_id)
    if declared:
        # This partition's description declares another layout: IBM i lays the data out by the description.
        data = mqmessages.encode(parse_declared(declared, None) or (), tuple(language.as_value(t) for t in tokens))
    partition.message_counter += 1
    queued = QueuedMessage(
        key=partition.message_counter,
        id=message.id,
        type=MessageType(message.type),
        severity=message.severity,
        text=message.text,
        data=data.hex().upper(),
        at=partition.tick(),
        from_user=from_user,
        from_program=from_program,
    )
    partition.message_queue(library, queue).messages.append(queued)
    return queued

"""Moving memory in and out whole: ``kenning-export`` files (:mod:`kenning.archive.transfer`,
the format in :mod:`kenning.records.archive`) and the conversation exports people already
have from ChatGPT, Claude and OpenAI-style message lists (:mod:`kenning.archive.chats`)."""

from kenning.archive.chats import Conversation, Message, detect_format, parse_conversations
from kenning.archive.transfer import ImportReport, export_lines, import_lines

__all__ = [
    "Conversation",
    "ImportReport",
    "Message",
    "detect_format",
    "export_lines",
    "import_lines",
    "parse_conversations",
]

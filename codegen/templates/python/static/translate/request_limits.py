"""What each vendor's request body takes beyond the value maps of mappings/: which parts a
message of each role may hold, which media types, and the extension namespace of each format.

The roles, content part types and parameter names themselves are data (`tables`); these are
the limits of each format that the translators check before they write a part.
"""

from __future__ import annotations

# The part types each format takes in a message of each of our roles.
ROLE_PARTS: dict[str, dict[str, frozenset[str]]] = {
    "openai-chat": {"system": frozenset({"text"}),
                    "user": frozenset({"text", "image", "document", "audio"}),
                    "assistant": frozenset({"text"}), "tool": frozenset({"text"})},
    "openai-responses": {"system": frozenset({"text", "image", "document"}),
                         "user": frozenset({"text", "image", "document"}),
                         "assistant": frozenset({"text"}),
                         "tool": frozenset({"text", "image", "document"})},
    "anthropic": {"system": frozenset({"text"}), "user": frozenset({"text", "image", "document"}),
                  "assistant": frozenset({"text"}),
                  "tool": frozenset({"text", "image", "document"})},
    "gemini": {"system": frozenset({"text"}),
               "user": frozenset({"text", "image", "document", "audio"}),
               "assistant": frozenset({"text", "image", "document", "audio"}),
               "tool": frozenset({"text"})},
}

# The extension namespace whose members each format's body takes verbatim.
EXTENSION_NAMESPACES: dict[str, str] = {
    "openai-chat": "vendor:openai",
    "openai-responses": "vendor:openai",
    "anthropic": "vendor:anthropic",
    "gemini": "vendor:google",
}

# OpenAI's input_audio format names, for our audio media types.
OPENAI_AUDIO_FORMATS: dict[str, str] = {
    "audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3",
}
OPENAI_AUDIO_MEDIA_TYPES: dict[str, str] = {"wav": "audio/wav", "mp3": "audio/mpeg"}

# The file name extension OpenAI file parts are given when a document part has no filename.
DOCUMENT_EXTENSIONS: dict[str, str] = {
    "application/pdf": "pdf", "text/plain": "txt", "text/markdown": "md", "text/csv": "csv",
    "text/html": "html", "application/json": "json",
}

# The image media types Anthropic takes, and the source type of each document media type.
ANTHROPIC_IMAGE_TYPES: frozenset[str] = frozenset(
    {"image/jpeg", "image/png", "image/gif", "image/webp"}
)
ANTHROPIC_DOCUMENT_SOURCES: dict[str, str] = {"application/pdf": "base64", "text/plain": "text"}

"""The value maps of the request translators: which vendor name each of our names becomes.

None marks what a vendor format cannot express; the translators refuse it, naming the field.
"""

from __future__ import annotations

# Each format's role for our roles; the system role of Anthropic and Gemini is a top-level
# member of the body, not a message role, and a tool result is part of a user turn there.
ROLES: dict[str, dict[str, str]] = {
    "openai-chat": {"system": "system", "user": "user", "assistant": "assistant",
                    "tool": "tool"},
    "openai-responses": {"system": "developer", "user": "user", "assistant": "assistant",
                         "tool": "function_call_output"},
    "anthropic": {"system": "system", "user": "user", "assistant": "assistant", "tool": "user"},
    "gemini": {"system": "systemInstruction", "user": "user", "assistant": "model",
               "tool": "user"},
}

# Each format's content part type for ours.
PART_TYPES: dict[str, dict[str, str | None]] = {
    "openai-chat": {"text": "text", "image": "image_url", "document": "file",
                    "audio": "input_audio"},
    "openai-responses": {"text": "input_text", "image": "input_image", "document": "input_file",
                         "audio": None},
    "anthropic": {"text": "text", "image": "image", "document": "document", "audio": None},
    "gemini": {"text": "text", "image": "inlineData", "document": "inlineData",
               "audio": "inlineData"},
}

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

# Each format's name for our generation parameters (Gemini's sit in generationConfig).
PARAMETERS: dict[str, dict[str, str | None]] = {
    "openai-chat": {"max_tokens": "max_completion_tokens", "temperature": "temperature",
                    "top_p": "top_p", "stop_sequences": "stop"},
    "openai-responses": {"max_tokens": "max_output_tokens", "temperature": "temperature",
                         "top_p": "top_p", "stop_sequences": None},
    "anthropic": {"max_tokens": "max_tokens", "temperature": None, "top_p": None,
                  "stop_sequences": "stop_sequences"},
    "gemini": {"max_tokens": "maxOutputTokens", "temperature": "temperature", "top_p": "topP",
               "stop_sequences": "stopSequences"},
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

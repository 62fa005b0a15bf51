"""The codes a failed model call carries (`LlmError.code`, `turn/end` `error.code`, `llm/retry`).

Codes are strings in the log and on the wire; these constants are their one spelling.
"""

from __future__ import annotations

AUTH = "AUTH"
"""The provider refused the credential (HTTP 401/403)."""
QUOTA = "QUOTA"
"""The account cannot pay for the call (HTTP 402)."""
RATE_LIMIT = "RATE_LIMIT"
"""Too many requests (HTTP 429); retried."""
INVALID_REQUEST = "INVALID_REQUEST"
"""The provider refused the request as malformed (HTTP 400 and the other 4xx)."""
CONTEXT_OVERFLOW = "CONTEXT_OVERFLOW"
"""The conversation no longer fits the model's context window (recognised in a 400's body)."""
SERVER = "SERVER"
"""The provider failed (HTTP 5xx, an error event in the stream, or it ran out of resources); retried."""
TRANSPORT = "TRANSPORT"
"""The provider could not be reached, or the connection broke (connect, read, protocol errors); retried."""
TIMEOUT = "TIMEOUT"
"""The provider sent nothing for longer than the stream idle timeout."""
STREAM_CLOSED = "STREAM_CLOSED"
"""The stream ended before its end marker (`data: [DONE]`)."""
MALFORMED_RESPONSE = "MALFORMED_RESPONSE"
"""The provider sent something that is not the expected event stream."""
MISSING_CREDENTIAL = "MISSING_CREDENTIAL"
"""No API key: the message names the environment variable to set. ACP answers it with -32000."""
EMPTY_RESPONSE = "EMPTY_RESPONSE"
"""The model stopped without producing any content."""
CONTENT_FILTER = "CONTENT_FILTER"
"""The provider's content filter stopped the answer."""

RETRYABLE = frozenset({RATE_LIMIT, SERVER, TRANSPORT})
"""Codes worth another attempt, as long as nothing of the failed attempt reached the agent."""

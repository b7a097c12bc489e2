"""The one exception the client raises for anything the server or the store refuses."""


class LayerlabError(Exception):
    """A failed call: the server's error, a connection failure or an unreadable answer.

    Attributes:
        status: the HTTP status (401, 404, 400...), or None when no HTTP answer came
            (connection refused, timeout) or the store file was read directly.
        code: the server's error code ("unauthenticated", "not_found",
            "invalid_argument"...), or the client's own: "unavailable" (no answer),
            "bad_response" (an answer that is not what the API documents),
            "timeout" (wait() ran out of time), "not_found" and "invalid_argument" for the
            SQLite reader.
        message: the server's message (for a bad study file, the study error with line and
            column) or the client's.
    """

    def __init__(self, status, code, message):
        self.status = status
        self.code = code
        self.message = message
        prefix = f"HTTP {status} " if status is not None else ""
        super().__init__(f"{prefix}{code}: {message}")

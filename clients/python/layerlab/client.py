"""A client of `layerlab serve`'s REST API (docs/api.md, docs/openapi.json), standard library
only. The server may be shared and is not trusted blindly: every call has a timeout,
answers are size-limited, redirects are not followed (they would carry the token
elsewhere), and anything that is not the documented JSON raises LayerlabError."""

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request

from . import frames
from .errors import LayerlabError

DEFAULT_URL = "http://127.0.0.1:8080"
MAX_RESPONSE_BYTES = 256 << 20  # one answer; a trials page of 1,000 is well under 1 MiB
_PAGE = 1000  # the API's largest page of trials and of workers
_FINAL_STUDY = ("finished", "cancelled")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        raise LayerlabError(code, "bad_response",
                            f"the server redirected to {newurl}; not followed (the token "
                            "would go with it): give the final URL")


def _quote(segment):
    return urllib.parse.quote(str(segment), safe="")


class Client:
    """Talks to one server.

    url: the server, e.g. "http://127.0.0.1:8080" (LAYERLAB_URL when not given).
    token: sent as "Authorization: Bearer TOKEN"; LAYERLAB_TOKEN when not given. Needed
        by submit() and cancel() when the server has a token; reads are open.
    timeout: seconds for each HTTP call (connect and each read).
    """

    def __init__(self, url=None, token=None, timeout=30.0):
        url = (url or os.environ.get("LAYERLAB_URL") or DEFAULT_URL).rstrip("/")
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise LayerlabError(None, "invalid_argument",
                                f"server URL must be http://HOST:PORT or https://..., got {url!r}")
        self.url = url
        self.token = token if token is not None else os.environ.get("LAYERLAB_TOKEN")
        self.timeout = timeout
        self._opener = urllib.request.build_opener(_NoRedirect())

    def __repr__(self):
        return f"layerlab.Client({self.url!r})"  # never the token

    # -- HTTP ------------------------------------------------------------------------
    def _request(self, method, path, query=None, body=None, content_type=None, raw=False,
                 binary=False):
        target = self.url + path
        if query:
            query = {k: v for k, v in query.items() if v is not None}
            if query:
                target += "?" + urllib.parse.urlencode(query)
        headers = {"Accept": "application/json", "User-Agent": "layerlab-python"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        data = None
        if body is not None:
            data = body.encode("utf-8") if isinstance(body, str) else body
            headers["Content-Type"] = content_type or "application/json"
        req = urllib.request.Request(target, data=data, headers=headers, method=method)
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                if binary:
                    return self._read_bytes(resp)
                status, text = resp.status, self._read(resp)
        except urllib.error.HTTPError as e:
            try:
                text = self._read(e)
            except (OSError, http.client.HTTPException):
                text = ""  # the status is what matters; the body broke off
            finally:
                e.close()
            raise self._error(e.code, text) from None
        except LayerlabError:
            raise
        except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
            reason = getattr(e, "reason", e)
            raise LayerlabError(None, "unavailable",
                                f"{method} {target}: no answer: {reason}") from None
        if raw:
            return text
        try:
            return json.loads(text)
        except ValueError:
            raise LayerlabError(status, "bad_response",
                                f"{method} {path}: the answer is not JSON") from None

    @staticmethod
    def _read_bytes(resp):
        data = resp.read(MAX_RESPONSE_BYTES + 1)
        if len(data) > MAX_RESPONSE_BYTES:
            raise LayerlabError(getattr(resp, "status", None), "bad_response",
                                f"the answer is over {MAX_RESPONSE_BYTES} bytes")
        return data

    @staticmethod
    def _read(resp):
        return Client._read_bytes(resp).decode("utf-8", errors="replace")

    @staticmethod
    def _error(status, text):
        try:
            err = json.loads(text)["error"]
            code, message = str(err["code"]), str(err["message"])
        except (ValueError, KeyError, TypeError):
            code, message = "bad_response", text[:200].strip() or f"HTTP {status}"
        return LayerlabError(status, code, message)

    def _get(self, path, **query):
        return self._request("GET", path, query=query)

    def _all_pages(self, path, key, **query):
        """Every item of a paged list (limit/offset, the answer's `total`)."""
        out, offset = [], 0
        while True:
            page = self._get(path, limit=_PAGE, offset=offset, **query)
            out.extend(page[key])
            offset += len(page[key])
            if not page[key] or offset >= page["total"]:
                return out

    # -- reads -------------------------------------------------------------------------
    def health(self):
        """GET /healthz: {"status": "ok", "store": "sqlite"}."""
        return self._get("/healthz")

    def openapi(self):
        """The server's OpenAPI 3.1 document."""
        return self._get("/api/v1/openapi.json")

    def studies(self):
        """Every study: a list of STUDY_SUMMARY dicts (id, name, status, total, finished,
        counts, each dataset's best...)."""
        return self._get("/api/v1/studies")["studies"]

    def study(self, study):
        """One study by id or name: summary, spec, datasets, parameters, each dataset's best
        trial."""
        return self._get(f"/api/v1/studies/{_quote(study)}")

    def trial(self, trial_id, attempt=None):
        """One trial with result, attempts and curve (attempt=0: every attempt's epochs)."""
        return self._get(f"/api/v1/trials/{int(trial_id)}", attempt=attempt)

    def summary(self, study, x, y="value", group=""):
        """The server's aggregates of y against x per dataset and group."""
        return self._get(f"/api/v1/studies/{_quote(study)}/summary", x=x, y=y, group=group)

    def workers(self):
        """Every worker the store knows (all pages): the alive ones first, then by last
        heartbeat. A list taken while workers come and go may miss or repeat one."""
        return self._all_pages("/api/v1/workers", "workers")

    def queue(self):
        return self._get("/api/v1/queue")

    def trial_records(self, study, status=None, dataset=None):
        """Every TRIAL_SUMMARY of a study (all pages), ordered by number. status: a name or
        a list of names."""
        if isinstance(status, (list, tuple, set)):
            status = ",".join(status)
        return self._all_pages(f"/api/v1/studies/{_quote(study)}/trials", "trials",
                               status=status, dataset=dataset)

    def trials(self, study, status=None, dataset=None):
        """A study's trials as a pandas DataFrame: one row per trial, parameters as
        columns (in the study file's order), value and metrics, status, times."""
        params = self.study(study).get("parameters")
        return frames.trials_frame(self.trial_records(study, status, dataset), params)

    def curves(self, study, status=None, dataset=None):
        """Learning curves as a long DataFrame: one row per trial and epoch (the latest
        attempt's), with the trial's number, dataset, status and parameters."""
        params = self.study(study).get("parameters")
        records = self.trial_records(study, status, dataset)
        curves = {r["id"]: self.trial(r["id"])["curve"] for r in records}
        return frames.curves_frame(records, curves, params)

    # -- writes ------------------------------------------------------------------------
    def submit(self, study):
        """Creates a study from a dict (sent as JSON) or YAML text (a study file).
        Returns {"id", "name", "total"}. A bad study raises LayerlabError 400 with the
        study error; an existing name 409."""
        if isinstance(study, dict):
            body, ctype = json.dumps(study), "application/json"
        elif isinstance(study, str):
            body, ctype = study, "application/yaml"
        else:
            raise TypeError("submit() takes a dict or YAML text")
        return self._request("POST", "/api/v1/studies", body=body, content_type=ctype)

    def cancel(self, study):
        """Cancels a running study's queued trials: {"id", "cancelled": N}."""
        return self._request("POST", f"/api/v1/studies/{_quote(study)}/cancel", body="")

    def wait(self, study, progress=None, poll=1.0, timeout=None):
        """Polls until the study is finished or cancelled and returns its summary.
        progress(summary) is called after every poll (summary["finished"] of
        summary["total"]). timeout: seconds, then LayerlabError "timeout"."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            s = self.study(study)
            if progress is not None:
                progress(s)
            if s["status"] in _FINAL_STUDY:
                return s
            if deadline is not None and time.monotonic() >= deadline:
                raise LayerlabError(None, "timeout",
                                    f"study {s['name']} is still {s['status']} "
                                    f"({s['finished']}/{s['total']}) after {timeout} s")
            time.sleep(poll)

    def download_model(self, trial_id, path=None):
        """GET /api/v1/trials/{id}/model: the model kept for a trial of a study with
        keep_weights, as safetensors bytes (written to `path` too when given). A trial
        without a kept model raises LayerlabError 404 `not_found` saying why."""
        data = self._request("GET", f"/api/v1/trials/{int(trial_id)}/model", binary=True)
        if path is not None:
            with open(path, "wb") as f:
                f.write(data)
        return data

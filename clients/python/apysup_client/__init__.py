"""A client of `apysup serve` (docs/api.md), standard library only.

    from apysup_client import Client
    c = Client()                                  # unix:/run/apysup/api.sock
    result = c.run("print(6*7)")                  # the RunResult, a dict
    result = c.run("import os; print(os.listdir())", workspace_dir="project")  # sent as a tar
    run_id = c.start("print('hi')")
    for name, data in c.events(run_id):           # ("ledger", {...}) ... ("result", {...})
        ...
"""

import base64
import http.client
import io
import json
import os
import socket
import tarfile

__all__ = ["Client", "APIError", "DEFAULT_SERVER", "pack_workspace"]

DEFAULT_SERVER = "unix:/run/apysup/api.sock"


class APIError(Exception):
    """A typed refusal of the server: code is its error_code, status the HTTP status."""

    def __init__(self, status, code, message):
        super().__init__("%s (%d): %s" % (code, status, message))
        self.status, self.code, self.message = status, code, message


def pack_workspace(directory):
    """The directory's regular files and directories as an uncompressed tar
    (bytes), with their permission bits, as the run request's workspace_tar
    wants it; anything else in it (a symbolic link, a FIFO, a device) is a
    ValueError, since the server refuses it. The server masks the modes and
    ignores owners and times, and bounds the archive (docs/api.md)."""

    def only_files_and_dirs(info):
        if not (info.isreg() or info.isdir()):
            raise ValueError("%s: only regular files and directories can seed a workspace" % info.name)
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in sorted(os.listdir(directory)):
            tar.add(os.path.join(directory, entry), arcname=entry, filter=only_files_and_dirs)
    return buf.getvalue()


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=None):
        super().__init__("apysup", timeout=timeout)
        self._path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if self.timeout is not None:
            s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


class Client:
    """Speaks to a server at "unix:PATH" or "http://HOST:PORT" (with token)."""

    def __init__(self, server=DEFAULT_SERVER, token=None, timeout=None):
        self._server, self._token, self._timeout = server, token, timeout
        if server.startswith("unix:"):
            self._path = server[len("unix:"):]
        elif server.startswith("http://"):
            self._path = None
            host = server[len("http://"):].rstrip("/")
            if not host or "/" in host:
                raise ValueError("server: want unix:PATH or http://HOST:PORT")
            self._host = host
        else:
            raise ValueError("server: want unix:PATH or http://HOST:PORT")

    def _connect(self):
        if self._path is not None:
            return _UnixConnection(self._path, timeout=self._timeout)
        return http.client.HTTPConnection(self._host, timeout=self._timeout)

    def _request(self, method, path, body=None):
        conn = self._connect()
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        if resp.status >= 300:
            raw = resp.read(65536)
            conn.close()
            try:
                err = json.loads(raw)
                code, message = err["error_code"], err["error"]
            except (ValueError, KeyError, TypeError):
                code, message = "http_error", "HTTP %d" % resp.status
            raise APIError(resp.status, code, message)
        return conn, resp

    def _call(self, method, path, body=None):
        conn, resp = self._request(method, path, body)
        try:
            return json.loads(resp.read())
        finally:
            conn.close()

    @staticmethod
    def _run_request(source, args=None, script_name=None, manifest=None, plan_sha256=None, limits=None,
                     backend=None, surface=None, parent=None, approve=None, workspace=None,
                     workspace_tar=None, workspace_dir=None, export=False):
        req = {"source": source}
        if sum(w is not None for w in (workspace, workspace_tar, workspace_dir)) > 1:
            raise ValueError("workspace, workspace_tar and workspace_dir are exclusive")
        if workspace_dir is not None:
            workspace_tar = pack_workspace(workspace_dir)
        if workspace_tar is not None:
            req["workspace_tar"] = base64.b64encode(workspace_tar).decode()
        for key, value in (("args", args), ("script_name", script_name), ("manifest", manifest), ("plan_sha256", plan_sha256),
                           ("limits", limits), ("backend", backend), ("surface", surface),
                           ("parent", parent), ("approve", approve)):
            if value:
                req[key] = value
        if workspace:
            req["workspace"] = {path: base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()
                                for path, data in workspace.items()}
        if export:
            req["export"] = True
        return req

    def run(self, source, **kwargs):
        """Runs source and returns its RunResult (a dict, as `apysup run --json` prints it).

        kwargs: args, script_name (its file name in the sandbox, default main.py), manifest
        (a dict), plan_sha256, limits ({"timeout_ms", "memory_bytes",
        "pids", "cpus"}), backend, surface, parent, approve ("deny", "auto", "api"),
        workspace ({path: bytes or str}), or workspace_tar (an uncompressed tar, bytes), or
        workspace_dir (a directory, sent as a tar by pack_workspace: empty directories and
        permission bits included), export (the result's "exported" map, decoded to bytes).
        """
        result = self._call("POST", "/v1/runs", self._run_request(source, **kwargs))
        if "exported" in result:
            result["exported"] = {p: base64.b64decode(d) for p, d in result["exported"].items()}
        return result

    def start(self, source, **kwargs):
        """Admits a run and returns its id at once (follow it with events())."""
        return self._call("POST", "/v1/runs?wait=false", self._run_request(source, **kwargs))["run_id"]

    def get(self, run_id):
        """The run's state: {"run_id", "state", "result" once finished}."""
        return self._call("GET", "/v1/runs/" + run_id)

    def cancel(self, run_id):
        return self._call("POST", "/v1/runs/" + run_id + "/cancel")

    def seal(self, manifest):
        """Seals a manifest on the server: {"plan_sha256", "tools"}."""
        return self._call("POST", "/v1/plans", {"manifest": manifest})

    def approvals(self):
        return self._call("GET", "/v1/approvals")["approvals"]

    def approve(self, approval_id):
        return self._call("POST", "/v1/approvals/" + approval_id + "/approve")

    def reject(self, approval_id):
        return self._call("POST", "/v1/approvals/" + approval_id + "/reject")

    def health(self):
        return self._call("GET", "/v1/health")

    def events(self, run_id):
        """Yields (name, data) for each event of the run, from its start; the last is ("result", RunResult)."""
        conn, resp = self._request("GET", "/v1/runs/" + run_id + "/events")
        return self._read_events(conn, resp)

    def stream(self, source, **kwargs):
        """Runs source and returns (run_id, events): events yields (name, data) as events() does,
        from one request (POST /v1/runs?wait=events). The run is the stream's: closing it, or a
        process that dies, cancels the run. kwargs: those of run()."""
        conn, resp = self._request("POST", "/v1/runs?wait=events", self._run_request(source, **kwargs))
        return resp.getheader("Apysup-Run-Id"), self._read_events(conn, resp)

    @staticmethod
    def _read_events(conn, resp):
        try:
            name, data = None, []
            while True:
                line = resp.readline()
                if not line:
                    return
                line = line.rstrip(b"\r\n").decode("utf-8")
                if line == "":
                    if name is not None or data:
                        payload = json.loads("\n".join(data)) if data else None
                        yield name or "message", payload
                        if name == "result":
                            return
                    name, data = None, []
                    continue
                field, _, value = line.partition(":")
                if value.startswith(" "):
                    value = value[1:]
                if field == "event":
                    name = value
                elif field == "data":
                    data.append(value)
        finally:
            conn.close()

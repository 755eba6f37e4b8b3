"""Tests of apysup_client against a real server: APYSUP_SERVER names it
(the Go test TestPythonClient starts one and runs these)."""

import io
import os
import tarfile
import tempfile
import time
import unittest

from apysup_client import APIError, Client, pack_workspace

LIST_WORKSPACE = (
    "import os\n"
    "for d, ds, fs in sorted(os.walk('.')):\n"
    "    print(d, sorted(ds), [(f, oct(os.stat(os.path.join(d, f)).st_mode & 0o777)) for f in sorted(fs)])\n"
)


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.client = Client(os.environ["APYSUP_SERVER"])

    def test_run_returns_the_run_result(self):
        res = self.client.run("import sys\nprint(6*7, sys.argv[1:])", args=["a"])
        self.assertEqual(res["schema_version"], "apysup.run_result.v1")
        self.assertEqual((res["status"], res["exit_code"], res["stdout"]), ("ok", 0, "42 ['a']\n"))

    def test_script_name(self):
        src = "import sys\nprint(sys.argv[0], __file__)"
        res = self.client.run(src)
        self.assertEqual(res["stdout"], "/run/apysup/job/main.py /run/apysup/job/main.py\n")
        res = self.client.run(src, script_name="tool.py")
        self.assertEqual(res["stdout"], "/run/apysup/job/tool.py /run/apysup/job/tool.py\n")
        with self.assertRaises(APIError) as cm:
            self.client.run(src, script_name="../tool.py")
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "invalid_request"))

    def test_exit_status_and_limits(self):
        res = self.client.run("import sys; sys.exit(5)")
        self.assertEqual((res["status"], res["exit_code"]), ("error", 5))
        res = self.client.run("import time; time.sleep(30)", limits={"timeout_ms": 500})
        self.assertEqual(res["status"], "timeout")

    def test_workspace_in_and_out(self):
        res = self.client.run("import pathlib\np = pathlib.Path('/workspace/in.txt')\n"
                              "pathlib.Path('/workspace/out.txt').write_text(p.read_text() * 2)",
                              workspace={"in.txt": "ab"}, export=True)
        self.assertEqual(res["status"], "ok")
        self.assertEqual(res["exported"]["out.txt"], b"abab")

    def test_workspace_dir_goes_as_a_tar(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "src"))
            os.makedirs(os.path.join(d, "empty"))
            with open(os.path.join(d, "src", "tool.py"), "w") as f:
                f.write("print('tool')\n")
            os.chmod(os.path.join(d, "src", "tool.py"), 0o755)
            with open(os.path.join(d, "in.txt"), "w") as f:
                f.write("x")
            res = self.client.run(LIST_WORKSPACE, workspace_dir=d)
            self.assertEqual(res["status"], "ok", res)
            # The server masks permission bits to 0755, the owner's read and write always kept.
            in_mode = oct(os.stat(os.path.join(d, "in.txt")).st_mode & 0o755 | 0o600)
            self.assertEqual(res["stdout"], ". ['empty', 'src'] [('in.txt', '%s')]\n" % in_mode +
                                            "./empty [] []\n"
                                            "./src [] [('tool.py', '0o755')]\n")
            os.symlink("/etc/passwd", os.path.join(d, "link"))
            with self.assertRaises(ValueError):
                pack_workspace(d)

    def test_hostile_tars_are_refused(self):
        def tar_of(*infos):
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w") as tar:
                for info in infos:
                    tar.addfile(info, io.BytesIO(b"x" * info.size) if info.isreg() else None)
            return buf.getvalue()

        link = tarfile.TarInfo("link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        escape = tarfile.TarInfo("../escape")
        escape.size = 1
        twin_a, twin_b = tarfile.TarInfo("README"), tarfile.TarInfo("readme")
        for archive, code in ((tar_of(link), "workspace_input_invalid"), (tar_of(escape), "workspace_input_invalid"),
                              (tar_of(twin_a, twin_b), "workspace_input_invalid"),
                              (b"not a tar" * 100, "workspace_tar_invalid")):
            with self.assertRaises(APIError) as cm:
                self.client.run("pass", workspace_tar=archive)
            self.assertEqual((cm.exception.status, cm.exception.code), (400, code))

    def test_events_yield_the_stream_and_end_with_the_result(self):
        run_id = self.client.start("print('streamed')")
        names, result = [], None
        for name, data in self.client.events(run_id):
            names.append(name)
            if name == "result":
                result = data
        self.assertEqual(names[0], "state")
        self.assertIn("ledger", names)
        self.assertEqual(names[-1], "result")
        self.assertEqual((result["status"], result["stdout"]), ("ok", "streamed\n"))
        self.assertEqual(self.client.get(run_id)["state"], "finished")

    def test_stream_is_one_request_and_owns_its_run(self):
        run_id, events = self.client.stream("import sys\nprint('streamed')\nsys.exit(3)")
        self.assertTrue(run_id.startswith("run-"))
        names, result = [], None
        for name, data in events:
            names.append(name)
            if name == "result":
                result = data
        self.assertIn("stdout", names)
        self.assertEqual(names[-1], "result")
        self.assertEqual((result["run_id"], result["status"], result["exit_code"]), (run_id, "error", 3))
        # Leaving the stream cancels the run.
        run_id, events = self.client.stream("import time\nprint('up', flush=True)\ntime.sleep(120)")
        for name, _ in events:
            if name == "stdout":
                break
        events.close()
        for _ in range(200):
            state = self.client.get(run_id)
            if state["state"] == "finished":
                break
            time.sleep(0.05)
        self.assertEqual(state["result"]["status"], "killed")

    def test_refusals_are_typed(self):
        with self.assertRaises(APIError) as cm:
            self.client.run("pass", backend="docker")
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "invalid_request"))
        with self.assertRaises(APIError) as cm:
            self.client.get("run-nope")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "run_not_found"))

    def test_health(self):
        self.assertIn(self.client.health()["status"], ("ok", "degraded"))


if __name__ == "__main__":
    unittest.main()

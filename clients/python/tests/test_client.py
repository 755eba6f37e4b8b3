"""Tests of apysup_client against a real server: APYSUP_SERVER names it
(the Go test TestPythonClient starts one and runs these)."""

import os
import unittest

from apysup_client import APIError, Client


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.client = Client(os.environ["APYSUP_SERVER"])

    def test_run_returns_the_run_result(self):
        res = self.client.run("import sys\nprint(6*7, sys.argv[1:])", args=["a"])
        self.assertEqual(res["schema_version"], "apysup.run_result.v1")
        self.assertEqual((res["status"], res["exit_code"], res["stdout"]), ("ok", 0, "42 ['a']\n"))

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

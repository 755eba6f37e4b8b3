"""Unit tests of the guest files. Run by guest_test.go as
python3.11 -I -S test_guest.py GUEST_DIR (GUEST_DIR holds the embedded files)."""

import json
import os
import signal
import socket
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, sys.argv.pop(1))

import _agent_runtime_host as host  # noqa: E402
import _agent_runtime_wire as wire  # noqa: E402
import agent_runtime  # noqa: E402
import apysup_runner as runner  # noqa: E402


def response(status, **fields):
    doc = {"status": status}
    doc.update(fields)
    return json.dumps(doc).encode()


def broker(status, **fields):
    doc = {"schema_version": "apysup.broker.v1", "call_id": "capability-1", "status": status}
    doc.update(fields)
    return doc


class WireDecode(unittest.TestCase):
    def test_ok_returns_canonical_result(self):
        body = response("completed", broker_response=broker("ok", result={"b": 1.50, "a": [1e21, "é"]}))
        self.assertEqual(wire.decode(body), '{"a":[1e+21,"é"],"b":1.5}'.encode())

    def test_refusals_raise_capability_error(self):
        for status in ("refused", "denied", "error"):
            body = response("completed", broker_response=broker(status, error_code="code_" + status, message="m"))
            with self.assertRaises(wire.CapabilityError) as cm:
                wire.decode(body)
            self.assertEqual((cm.exception.error_code, cm.exception.message), ("code_" + status, "m"))
        with self.assertRaises(wire.CapabilityError) as cm:
            wire.decode(response("rejected", error_code="unauthenticated"))
        self.assertEqual(cm.exception.error_code, "unauthenticated")

    def test_ambiguous_raises_ambiguous_outcome(self):
        for body, code in (
            (response("completed", broker_response=broker("ambiguous", error_code="approval_audit_failed")), "approval_audit_failed"),
            (response("ambiguous", error_code="call_in_flight"), "call_in_flight"),
        ):
            with self.assertRaises(wire.AmbiguousOutcome) as cm:
                wire.decode(body)
            self.assertEqual(cm.exception.error_code, code)
            self.assertIsInstance(cm.exception, wire.AgentRuntimeError)

    def test_malformed_is_ambiguous(self):
        for body in (
            b"",
            b"not json",
            b"[]",
            b'{"status":"completed","status":"rejected"}',
            response("completed", broker_response=broker("ok")),
            response("completed", broker_response=broker("weird")),
            response("completed", broker_response="x"),
            response("other"),
            b'{"status":"completed","broker_response":{"status":"ok","result":NaN}}',
            b'{"status":"completed","broker_response":{"status":"ok","result":"\\ud800"}}',
            b"\xff",
        ):
            with self.assertRaises(wire.AmbiguousOutcome, msg=body) as cm:
                wire.decode(body)
            self.assertEqual(cm.exception.error_code, "malformed_response")


def random_json(rng, depth=0):
    """A JSON text of every kind decode meets: floats, integers around
    2**53, keys that sort differently by code point and by UTF-16, escapes
    (a surrogate pair, a lone surrogate), raw non-ASCII text."""
    strings = ["", "a", "b", "é", "€", "\uff5e", "😀", "\U0001f600x", "\r", "1", "דּ", "\u2028"]
    escapes = ['"\\ud83d\\ude00"', '"\\u00e9"', '"\\ud800"', '"\\n\\u0041"']
    numbers = ["0", "-0", "1", "-17", "9007199254740992", "9007199254740993", "-9007199254740993",
               "123456789012345678901234567890", "1.5", "-0.0", "1e21", "1E400", "2.50", "5e-324"]
    kind = rng.randrange(7 if depth < 4 else 4)
    if kind == 0:
        return rng.choice(["null", "true", "false"] + numbers)
    if kind in (1, 2):
        return rng.choice(numbers)
    if kind == 3:
        if rng.random() < 0.2:
            return rng.choice(escapes)
        return json.dumps(rng.choice(strings), ensure_ascii=rng.random() < 0.3)
    if kind == 4:
        return "[" + ",".join(random_json(rng, depth + 1) for _ in range(rng.randrange(4))) + "]"
    keys = rng.sample(strings, rng.randrange(5))
    items = []
    for k in keys:
        key = json.dumps(k, ensure_ascii=rng.random() < 0.3) if rng.random() < 0.9 else rng.choice(escapes)
        items.append(key + ":" + random_json(rng, depth + 1))
    return "{" + ",".join(items) + "}"


class WireFastPath(unittest.TestCase):
    """decode() writes plain results with the json module's C encoder and
    check_frame() skips its walk for small frames: both must answer exactly
    what the pure-Python path (canonical(), _depth_ok) answers."""

    def slow_decode(self, text):
        try:
            doc = json.loads(text, object_pairs_hook=wire._no_duplicates, parse_constant=wire._no_constant)
        except (ValueError, RecursionError):
            return "malformed"
        try:
            return wire.canonical(doc["broker_response"]["result"])
        except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
            return "malformed"

    def test_decode_matches_canonical(self):
        import random

        rng = random.Random(17)
        plain = 0
        for _ in range(5000):
            result = random_json(rng)
            text = '{"status":"completed","broker_response":{"status":"ok","result":%s}}' % result
            want = self.slow_decode(text)
            try:
                got = wire.decode(text.encode("utf-8", "surrogatepass"))
            except wire.AmbiguousOutcome as exc:
                got = exc.error_code.replace("malformed_response", "malformed")
            self.assertEqual(got, want, text)
            if wire._no_astral(text):
                try:
                    wire._loads_strict(text, wire._plain)
                    plain += 1
                except (wire._NotPlain, ValueError):
                    pass
        self.assertGreater(plain, 1000)  # the fast path was taken, often

    def test_call_path_imports_no_json_package(self):
        # The codecs come from _json alone (json imports re: 20 ms under
        # wazero); a first decode without check_frame is still canonical; a
        # malformed text is still refused, with json.decoder imported then.
        import subprocess
        here = os.path.dirname(wire.__file__)
        code = """if True:
            import sys; sys.path.insert(0, %r)
            import _agent_runtime_wire as w
            ok = b'{"status":"completed","broker_response":{"status":"ok","result":[1.0,100000000000000000000000000,{"b":"x","a":2}]}}'
            out = [w.decode(ok), w.decode(ok)]
            w.check_frame(w.dumps({"call_id": "c", "capability": "k", "arguments": {}}).encode())
            w.loads(out[0])
            out.append(sorted(m for m in ("json", "json.decoder", "re") if m in sys.modules))
            for bad in (b'{"status":', b'{"status":"completed" 1}', b'"\x01"', b'[1,]'):
                try:
                    w.decode(bad)
                except w.AmbiguousOutcome as e:
                    out.append(e.error_code)
            for bad in (b'{"call_id":"c",}', b'{"call_id":"c","capability":"k","arguments":{}} x'):
                try:
                    w.check_frame(bad)
                except w.CapabilityError as e:
                    out.append(e.error_code)
            print(out)
        """ % here
        out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
        self.assertEqual(out.stdout.strip(), repr(
            [b'[1,1e+26,{"a":2,"b":"x"}]'] * 2 + [[]] + ["malformed_response"] * 4 + ["frame_malformed"] * 2))

    def test_dumps_and_loads_are_json(self):
        # agent_runtime's JSON: wire.dumps is JSONEncoder(ensure_ascii=False,
        # allow_nan=False, separators=(",", ":")).encode, refusals included;
        # wire.loads is json.loads.
        import random

        encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
        cyclic = []
        cyclic.append(cyclic)

        class Sub(str):
            pass

        values = [None, True, 1, -0.0, 1.5, 1e21, 2**70, "é😀\u2028\x00\"", Sub("s"), (1, [2]), {1: "a", 2.5: "b", None: 0, True: 1, "k": {}},
                  float("nan"), float("inf"), object(), {(1,): 2}, cyclic, [set()], b"x", [[]] * 3]
        rng = random.Random(5)
        for _ in range(2000):
            values.append(json.loads(random_json(rng), parse_constant=str))
        for value in values:
            for _ in range(2):  # again after a failure: no marker left behind
                try:
                    want = ("ok", encode(value))
                except (TypeError, ValueError, RecursionError) as e:
                    want = ("error", type(e))
                try:
                    got = ("ok", wire.dumps(value))
                except (TypeError, ValueError, RecursionError) as e:
                    got = ("error", type(e))
                self.assertEqual(got, want, repr(value))
            if want[0] == "ok":
                data = want[1].encode("utf-8", "surrogatepass")
                self.assertEqual(repr(wire.loads(data)), repr(json.loads(data)), data)
        for data in (b'{"a":NaN,"b":-Infinity}', b'[1.0,-0,"\\ud800"]', b" [1] ", b"[1] x", b""):
            try:
                want = repr(json.loads(data))
            except ValueError:
                want = "error"
            try:
                got = repr(wire.loads(data))
            except ValueError:
                got = "error"
            self.assertEqual(got, want, data)

    def test_loads_strict_is_json_loads(self):
        for text in ("1", "[1] x", "[1]]", "", " [1]", "[1] ", "\t{}\n", "\ufeff1", '{"a":1}', '"x', "nul", "1 2", "[1,]"):
            try:
                got = ("ok", wire._loads_strict(text))
            except ValueError:
                got = ("error",)
            try:
                want = ("ok", json.loads(text))
            except ValueError:
                want = ("error",)
            self.assertEqual(got, want, repr(text))

    def test_check_frame_shortcut_matches_walk(self):
        def frame(arguments):
            return ('{"call_id":"c","capability":"k","arguments":%s}' % arguments).encode()

        for arguments, ok in (
            ("[" * 62 + "]" * 62, True),
            ("[1," * 40 + "2" + "]" * 40, True),
            ("[" + "[0]," * 70 + "1]", True),
            ("[" * 63 + "]" * 63, True),
            ("[" * 63 + "1" + "]" * 63, False),
            ("[" * 64 + "]" * 64, False),
            ('{"a":"\\ud800"}', False),
            ('{"a":"\\ud83d\\ude00"}', True),
            ('{"\\ud800":1}', False),  # a key's lone surrogate as much as a value's
            ('{"a":{"\\udfff":[]}}', False),
            ('"' + "[" * 100 + '"', True),
        ):
            raw = frame(arguments)
            doc = json.loads(raw)
            self.assertEqual(wire._depth_ok(doc), ok, arguments)
            if wire._surely_shallow(raw.decode()):
                self.assertTrue(ok, arguments)
            if ok:
                wire.check_frame(raw)
            else:
                with self.assertRaises(wire.CapabilityError, msg=arguments):
                    wire.check_frame(raw)


    def test_check_frame_refuses_numbers_beyond_a_double(self):
        # The host reads every number as a double, and refuses one beyond
        # its range: 1e400 natively as a malformed envelope, under wazero
        # as a malformed frame, unless check_frame refuses it first.
        big = "1" + "0" * 309
        for number, ok in (
            ("1e400", False), ("-1e400", False), ("1.7976931348623157e308", True),
            ("1.7976931348623159e308", False), ("1e-400", True), ("1" + "0" * 308, True),
            (big, False), ("-" + big, False), ("[1,2e308]", False), ("1" + "0" * 5000, False),
            ('"%s"' % big, True), ("[%s, 1.5]" % ("1" * 300), True),  # digits in a string; a long frame
        ):
            raw = ('{"call_id":"c","capability":"k","arguments":{"n":%s}}' % number).encode()
            if ok:
                wire.check_frame(raw)
            else:
                with self.assertRaises(wire.CapabilityError, msg=number) as cm:
                    wire.check_frame(raw)
                self.assertEqual(cm.exception.error_code, "frame_malformed")

    def test_check_frame_refuses_an_empty_call_id(self):
        with self.assertRaises(wire.CapabilityError) as cm:
            wire.check_frame(b'{"call_id":"","capability":"k","arguments":{}}')
        self.assertEqual(cm.exception.error_code, "invalid_call_id")


class Canonical(unittest.TestCase):
    def test_rfc8785_numbers(self):
        cases = {
            0.0: "0", -0.0: "0", 5e-324: "5e-324", 1.7976931348623157e308: "1.7976931348623157e+308",
            9007199254740992.0: "9007199254740992", 295147905179352830000.0: "295147905179352830000",
            9.999999999999997e22: "9.999999999999997e+22", 1e23: "1e+23", 1e21: "1e+21",
            999999999999999700000.0: "999999999999999700000", 9.999999999999997e-7: "9.999999999999997e-7",
            0.000001: "0.000001", 333333333.3333332: "333333333.3333332", -0.0000033333333333333333: "-0.0000033333333333333333",
            1424953923781206.2: "1424953923781206.2", 4.5: "4.5", 0.002: "0.002", 1e-27: "1e-27", 100.0: "100",
        }
        for value, want in cases.items():
            self.assertEqual(wire.canonical(value), want.encode(), value)

    def test_rfc8785_key_order(self):
        doc = {"€": 1, "\r": 2, "דּ": 3, "1": 4, "😀": 5, "\u0080": 6, "ö": 7}
        self.assertEqual(
            wire.canonical(doc).decode(),
            '{"\\r":2,"1":4,"\u0080":6,"ö":7,"€":1,"😀":5,"דּ":3}',
        )

    def test_refuses_non_json(self):
        for value in (float("nan"), float("inf"), {1: 2}, object()):
            with self.assertRaises((TypeError, ValueError)):
                wire.canonical(value)


class CallIDs(unittest.TestCase):
    def setUp(self):
        self.frames = []
        self.lock = threading.Lock()
        self.saved = host.call

        def fake(frame):
            with self.lock:
                self.frames.append(json.loads(frame))
            return b'{"ok":true}'

        host.call = fake
        agent_runtime._bound = False

    def tearDown(self):
        host.call = self.saved

    def test_direct_ids_are_allocated_once_each_across_threads(self):
        agent_runtime._bind(None)
        threads = [
            threading.Thread(target=lambda: [agent_runtime._capability_call("echo.say", {"i": i}) for i in range(100)])
            for _ in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ids = sorted(int(f["call_id"].split("-")[1]) for f in self.frames)
        self.assertEqual(ids, list(range(1, 801)))

    def test_program_ids_and_unburnt_sequence(self):
        agent_runtime._bind("toolu_9")
        with self.assertRaises(agent_runtime.CapabilityError) as cm:
            agent_runtime._capability_call("echo.say", {"x": object()})
        self.assertEqual(cm.exception.error_code, "arguments_not_json")
        self.assertEqual(agent_runtime._capability_call("echo.say", {"x": 1}), {"ok": True})
        agent_runtime._capability_call("notes.put", {})
        self.assertEqual(
            self.frames,
            [
                {"call_id": "toolu_9:program:1", "capability": "echo.say", "arguments": {"x": 1}},
                {"call_id": "toolu_9:program:2", "capability": "notes.put", "arguments": {}},
            ],
        )
        with self.assertRaises(agent_runtime.AgentRuntimeError):
            agent_runtime._bind(None)

    def test_ids_of_calls_that_never_left_are_given_back(self):
        # Refused before the frame left the guest (or at the Broker's first
        # step, which spends no id): the next call takes the same number.
        # Refused later, or ambiguous: the number is spent.
        agent_runtime._bind("toolu_9")
        answers = {
            "frame_too_large": agent_runtime.CapabilityError("frame_too_large", ""),
            "frame_malformed": agent_runtime.CapabilityError("frame_malformed", ""),
            "channel_unavailable": agent_runtime.CapabilityError("channel_unavailable", ""),
            "max_calls_exhausted": agent_runtime.CapabilityError("max_calls_exhausted", ""),
            "grant_denied": agent_runtime.CapabilityError("grant_denied", ""),
            "dispatch_outcome_unknown": agent_runtime.AmbiguousOutcome("dispatch_outcome_unknown", ""),
        }
        seen = []

        def refuse(frame):
            doc = json.loads(frame)
            seen.append(doc["call_id"])
            raise answers[doc["arguments"]["code"]]

        host.call = refuse
        for code in answers:
            with self.assertRaises(agent_runtime.AgentRuntimeError) as cm:
                agent_runtime._capability_call("echo.say", {"code": code})
            self.assertEqual(cm.exception.error_code, code)
        with self.assertRaises(agent_runtime.CapabilityError):
            agent_runtime._capability_call("echo.say", {"code": "\ud800"})
        self.assertEqual(seen, ["toolu_9:program:1"] * 5 + ["toolu_9:program:2"])
        self.assertEqual(agent_runtime._next, 3)

    def test_calls_from_threads_reach_the_host_one_at_a_time_in_order(self):
        # The host admits a programmatic id only as the parent's next: ids
        # numbered by two threads must not reach it in either order. Each
        # call holds the runtime's call lock until its answer.
        agent_runtime._bind("toolu_9")
        arrived, active, most = [], [0], [0]

        def slow(frame):
            with self.lock:
                active[0] += 1
                most[0] = max(most[0], active[0])
                arrived.append(int(json.loads(frame)["call_id"].rsplit(":", 1)[1]))
            time.sleep(0.001)  # lets other threads run, as a host round trip does
            with self.lock:
                active[0] -= 1
            return b'{"ok":true}'

        host.call = slow
        threads = [
            threading.Thread(target=lambda: [agent_runtime._capability_call("echo.say", {}) for _ in range(10)])
            for _ in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(arrived, list(range(1, 81)))
        self.assertEqual(most[0], 1)

    def test_id_given_back_after_an_interruption_before_the_bridge(self):
        # A signal handler's exception between the numbering and the bridge:
        # the frame never left, and the next call takes the same number.
        agent_runtime._bind("toolu_9")
        saved = agent_runtime._dumps

        def interrupted(value):
            if isinstance(value, str) and ":program:" in value:
                agent_runtime._dumps = saved
                raise KeyboardInterrupt
            return saved(value)

        agent_runtime._dumps = interrupted
        try:
            with self.assertRaises(KeyboardInterrupt):
                agent_runtime._capability_call("echo.say", {"x": 1})
        finally:
            agent_runtime._dumps = saved
        agent_runtime._capability_call("echo.say", {"x": 2})
        self.assertEqual([f["call_id"] for f in self.frames], ["toolu_9:program:1"])
        self.assertEqual(agent_runtime._next, 2)

    def test_a_call_made_while_a_call_waits_in_the_same_thread_goes_on(self):
        # A signal handler's call, made while its thread's call waits for
        # the host: the call lock is reentrant, and the outer call then
        # gets its own answer.
        agent_runtime._bind("toolu_9")
        answers = []

        def outer(frame):
            doc = json.loads(frame)
            if doc["arguments"].get("outer"):
                answers.append(agent_runtime._capability_call("echo.say", {"inner": 1}))
            self.frames.append(doc)
            return b'{"id":%s}' % json.dumps(doc["call_id"]).encode()

        host.call = outer
        self.assertEqual(agent_runtime._capability_call("echo.say", {"outer": 1}), {"id": "toolu_9:program:1"})
        self.assertEqual(answers, [{"id": "toolu_9:program:2"}])


class FakeChannel:
    """A Unix-socket HTTP peer with a scripted behaviour per connection."""

    def __init__(self, behaviours):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "s")
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(self.path)
        self.listener.listen()
        self.behaviours = list(behaviours)
        self.requests = 0
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()
        cf = os.path.join(self.dir, "channel.json")
        with open(cf, "w") as f:
            json.dump({"socket": self.path, "channel_id": "c", "invocation_id": "i", "execution_id": "e",
                       "plan_sha256": "sha256:" + "0" * 64, "credential": "A" * 43}, f)
        os.environ["APYSUP_CHANNEL_FILE"] = cf
        host._channel = None
        host._idle.clear()

    def serve(self):
        for behaviour in self.behaviours:
            conn, _ = self.listener.accept()
            with conn:
                behaviour(self, conn)

    def read_request(self, conn):
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0].split(b":")[1])
        while len(body) < length:
            body += conn.recv(65536)
        self.requests += 1
        return json.loads(body)

    def answer(self, conn, req):
        result = req["call"]["arguments"]
        body = response("completed", broker_response=broker("ok", result=result))
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))

    def close(self):
        self.listener.close()
        os.unlink(self.path)
        os.unlink(os.environ.pop("APYSUP_CHANNEL_FILE"))
        os.rmdir(self.dir)
        host._channel = None
        for s in host._idle:
            s.close()
        host._idle.clear()


def answer_then_close(ch, conn):
    ch.answer(conn, ch.read_request(conn))


def answer_twice(ch, conn):
    for _ in range(2):
        ch.answer(conn, ch.read_request(conn))


def read_then_drop(ch, conn):
    ch.read_request(conn)


def answer_then_slow(ch, conn):
    ch.answer(conn, ch.read_request(conn))
    req = ch.read_request(conn)
    time.sleep(0.3)
    try:
        ch.answer(conn, req)
    except OSError:
        pass  # the bridge closed the connection


def slow_answer(ch, conn):
    req = ch.read_request(conn)
    time.sleep(0.3)
    try:
        ch.answer(conn, req)
    except OSError:
        pass


FRAME = b'{"call_id":"capability-1","capability":"echo.say","arguments":{"n":1}}'


class Bridge(unittest.TestCase):
    def test_keeps_the_connection_alive(self):
        ch = FakeChannel([answer_twice])
        try:
            self.assertEqual(host.call(FRAME), b'{"n":1}')
            self.assertEqual(host.call(FRAME.replace(b"1}", b"2}")), b'{"n":2}')
            self.assertEqual(ch.requests, 2)
        finally:
            ch.close()

    def test_reconnects_when_an_idle_connection_was_closed(self):
        # The peer closes the kept-alive connection after one answer: the
        # request on it gets no byte back and is sent again on a new one.
        ch = FakeChannel([answer_then_close, answer_then_close])
        try:
            host.call(FRAME)
            self.assertEqual(host.call(FRAME), b'{"n":1}')
            self.assertEqual(ch.requests, 2)
        finally:
            ch.close()

    def test_failure_after_sending_is_ambiguous(self):
        ch = FakeChannel([read_then_drop])
        try:
            with self.assertRaises(agent_runtime.AmbiguousOutcome) as cm:
                host.call(FRAME)
            self.assertEqual(cm.exception.error_code, "dispatch_outcome_unknown")
        finally:
            ch.close()

    def test_await_answer_polls_then_leaves_the_bytes(self):
        # An answer there already: back at once, the bytes left for recv.
        a, b = socket.socketpair()
        try:
            b.sendall(b"answer")
            host._await_answer(a)
            self.assertEqual(a.recv(16), b"answer")
            # No answer: back after the window, having read nothing.
            start = time.monotonic_ns()
            host._await_answer(a)
            waited = time.monotonic_ns() - start
            self.assertGreaterEqual(waited, host.ANSWER_SPIN_NS)
            self.assertLess(waited, 100 * host.ANSWER_SPIN_NS)
            # An answer that comes during the window ends it.
            timer = threading.Timer(0.00005, b.sendall, (b"late",))
            timer.start()
            host._await_answer(a)
            timer.join()
            self.assertEqual(a.recv(16), b"late")
            # A peer that closed ends it too; recv then says so.
            b.close()
            start = time.monotonic_ns()
            host._await_answer(a)
            self.assertLess(time.monotonic_ns() - start, 100 * host.ANSWER_SPIN_NS)
            self.assertEqual(a.recv(16), b"")
        finally:
            a.close()
            b.close()

    def alarm_during(self, handler, behaviour, calls):
        """Make calls on one connection with an alarm due 50 ms into the
        last; return what the last returned or raised."""
        ch = FakeChannel([behaviour])
        previous = signal.signal(signal.SIGALRM, handler)
        try:
            for _ in range(calls - 1):
                host.call(FRAME)
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            try:
                return host.call(FRAME)
            except BaseException as exc:
                return exc
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            ch.close()
            self.requests = ch.requests

    def test_signal_handler_exception_propagates(self):
        # A handler's exception interrupts the call and propagates as it
        # was raised, on a fresh connection and on a kept-alive one, which
        # is not taken for a closed connection and sent again.
        def timeout(signum, frame):
            raise TimeoutError("alarm")

        class Custom(Exception):
            pass

        def custom(signum, frame):
            raise Custom()

        for behaviour, calls in ((slow_answer, 1), (answer_then_slow, 2)):
            got = self.alarm_during(timeout, behaviour, calls)
            self.assertIsInstance(got, TimeoutError)
            self.assertEqual(self.requests, calls)
            self.assertEqual(host._idle, [])
        got = self.alarm_during(custom, slow_answer, 1)
        self.assertIsInstance(got, Custom)

    def test_connect_refusal_and_interruption(self):
        # A connect the socket refuses is channel_unavailable; one a signal
        # handler interrupts raises the handler's exception.
        with self.assertRaises(agent_runtime.CapabilityError) as cm:
            host._connect("/nonexistent/socket")
        self.assertEqual(cm.exception.error_code, "channel_unavailable")

        class Interrupted:
            def __init__(self, *args):
                self.closed = False

            def connect(self, path):
                raise TimeoutError("alarm")

            def close(self):
                self.closed = True

        real = host.socket.socket
        host.socket.socket = Interrupted
        try:
            with self.assertRaises(TimeoutError):
                host._connect("/nonexistent/socket")
        finally:
            host.socket.socket = real

    def test_signal_handler_that_returns_lets_the_call_end(self):
        fired = []
        got = self.alarm_during(lambda signum, frame: fired.append(signum), slow_answer, 1)
        self.assertEqual(got, b'{"n":1}')
        self.assertEqual(fired, [signal.SIGALRM])

    def test_refusals_before_sending(self):
        with self.assertRaises(agent_runtime.CapabilityError) as cm:
            host.call(b"x" * ((1 << 20) + 1))
        self.assertEqual(cm.exception.error_code, "frame_too_large")
        with self.assertRaises(agent_runtime.CapabilityError) as cm:
            host.call(b"")
        self.assertEqual(cm.exception.error_code, "frame_empty")
        os.environ["APYSUP_CHANNEL_FILE"] = "/nonexistent/channel.json"
        host._channel = None
        try:
            with self.assertRaises(agent_runtime.CapabilityError) as cm:
                host.call(FRAME)
            self.assertEqual(cm.exception.error_code, "channel_unavailable")
        finally:
            del os.environ["APYSUP_CHANNEL_FILE"]
            host._channel = None


class Tracebacks(unittest.TestCase):
    """The outcome's traceback reads only the entries the interpreter prints."""

    @staticmethod
    def _deep(depth, exc=ValueError):
        def f(n):
            if n == 0:
                raise exc("bottom")
            return f(n - 1)
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(depth + 100)
        try:
            f(depth)
        except BaseException as e:
            return e
        finally:
            sys.setrecursionlimit(limit)

    @staticmethod
    def _entries(tb):
        n = 0
        while tb is not None:
            n, tb = n + 1, tb.tb_next
        return n

    @staticmethod
    def _printed(exc):
        import io
        saved, sys.stderr = sys.stderr, io.StringIO()
        try:
            sys.__excepthook__(type(exc), exc, exc.__traceback__)
            return sys.stderr.getvalue()
        finally:
            sys.stderr = saved

    def test_last_entries(self):
        e = self._deep(1500)
        tb = e.__traceback__
        total = self._entries(tb)
        self.assertGreater(total, 1500)
        for count in (0, 1, 999, 1000, total - 1, total, total + 5):
            last = runner._last_entries(tb, count)
            self.assertEqual(self._entries(last), min(count, total), count)
            end = last
            while end is not None and end.tb_next is not None:
                end = end.tb_next
            if count:
                self.assertEqual(end.tb_frame.f_code.co_name, "f")
        self.assertIsNone(runner._last_entries(None, 3))

    def test_trimmed_chain_prints_as_the_interpreter(self):
        import traceback
        # A deep error, raised from another deep one, during the handling of
        # a third, and an exception group of deep members, one of them the
        # group itself's context: every traceback in the graph is trimmed,
        # the interpreter's printer shows what it showed before, and the
        # traceback module (the outcome's) now shows the same entries as it.
        cause, context = self._deep(1200), self._deep(2500, KeyError)
        top = self._deep(1800, RuntimeError)
        top.__cause__, top.__context__ = cause, context
        members = [self._deep(1100), self._deep(10, OSError)]
        group = ExceptionGroup("many", members)
        try:
            raise group
        except ExceptionGroup as g:
            group = g
        members[0].__context__ = group  # a cycle
        for exc in (top, group):
            printed = self._printed(exc)
            runner._trim_tracebacks(exc)
            self.assertEqual(self._printed(exc), printed)
        self.assertEqual("".join(traceback.format_exception(top)), self._printed(top))
        # (3.11's C printer indents a group member's "[Previous line
        # repeated" line differently from the traceback module.)
        self.assertEqual("".join(traceback.format_exception(group)).count("[Previous line repeated"),
                         self._printed(group).count("[Previous line repeated"))
        for exc in (top, cause, context, group, *members):
            self.assertLessEqual(self._entries(exc.__traceback__), runner.TRACEBACK_ENTRIES)
        self.assertEqual(self._entries(members[1].__traceback__), 12)


class RunnerArguments(unittest.TestCase):
    BASE = ["--prelude", "p.py", "--outcome", "o.json"]

    def test_script_after_double_dash(self):
        self.assertEqual(runner._parse(self.BASE + ["--", "s.py", "a", "--argv"]),
                         ("p.py", "o.json", "/workspace", ["s.py", "a", "--argv"]))

    def test_argv_file(self):
        parsed = runner._parse(self.BASE + ["--workdir", "/w", "--argv", "argv"])
        self.assertEqual(parsed, ("p.py", "o.json", "/w", "argv"))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "argv")
            with open(path, "wb") as f:
                f.write(b"/run/apysup/job/main.py\0x y\0\0\xff\xc3\xa9\0")
            # Undecodable bytes survive as the interpreter's own argv would.
            self.assertEqual(runner._script_argv(path),
                             ["/run/apysup/job/main.py", "x y", "", "\udcff\u00e9"])
            for bad in (b"", b"\0", b"main.py", b"\0main.py\0", b"main.py\0x"):
                with open(path, "wb") as f:
                    f.write(bad)
                with self.assertRaises(ValueError, msg=bad):
                    runner._script_argv(path)
            with self.assertRaises(OSError):
                runner._script_argv(os.path.join(d, "missing"))

    def test_job_descriptor(self):
        parsed = runner._parse(self.BASE + ["--job-fd", "7", "--ready-fd", "8"])
        self.assertEqual(parsed, ("p.py", "o.json", "/workspace", (7, 8)))
        self.assertEqual(runner._parse(self.BASE + ["--job-fd", "7"])[3], (7, None))
        job_r, job_w = os.pipe()
        ready_r, ready_w = os.pipe()
        os.write(job_w, b"/run/apysup/job/main.py\0a\0")
        os.close(job_w)
        self.assertEqual(runner._script_argv((job_r, ready_w)), ["/run/apysup/job/main.py", "a"])
        # Ready was said, and both of the runner's descriptors are closed.
        self.assertEqual(os.read(ready_r, 2), b"R")
        os.close(ready_r)
        for fd in (job_r, ready_w):
            with self.assertRaises(OSError):
                os.fstat(fd)
        # A job that never came (the host closed the pipe unwritten).
        job_r, job_w = os.pipe()
        os.close(job_w)
        with self.assertRaises(ValueError):
            runner._script_argv((job_r, None))

    @staticmethod
    def _write_job(d, source):
        """Writes source as d/s.py and an empty prelude d/p.py; returns the
        script's path."""
        script = os.path.join(d, "s.py")
        with open(script, "w") as f:
            f.write(source)
        open(os.path.join(d, "p.py"), "w").close()
        return script

    @staticmethod
    def _run_job(d, script, argv, fds=()):
        """Runs the runner on script's job (prelude d/p.py, outcome
        d/o.json), the job written to a pipe named in argv by JOB
        (--job-fd JOB or --argv /dev/fd/JOB)."""
        import subprocess
        prelude = os.path.join(d, "p.py")
        job_r, job_w = os.pipe()
        os.write(job_w, script.encode() + b"\0")
        os.close(job_w)
        argv = [a.replace("JOB", str(job_r)) for a in argv]
        cmd = [sys.executable, "-I", "-S", runner.__file__, "--prelude", prelude,
               "--outcome", os.path.join(d, "o.json"), "--workdir", d] + argv
        try:
            return subprocess.run(cmd, pass_fds=(job_r,) + tuple(fds), capture_output=True, text=True)
        finally:
            os.close(job_r)

    def test_uncaught_exception_ends_as_the_interpreter_ends(self):
        # What `python script.py` prints and exits with when a script
        # leaves an exception uncaught, whatever the exception's own code
        # or the script's sys.excepthook raises while it is reported; an
        # uncaught KeyboardInterrupt (not a subclass of it) kills the
        # process with SIGINT, as the interpreter's exit_sigint does.
        import signal
        import subprocess
        cases = {
            "str_raises_systemexit": ("class E(Exception):\n    def __str__(self):\n        raise SystemExit(3)\n"
                                      "raise E\n", "E", 1),
            "str_raises_interrupt": ("class E(Exception):\n    def __str__(self):\n        raise KeyboardInterrupt\n"
                                     "raise E('x')\n", "E", 1),
            "hook_exits": ("import sys\nsys.excepthook = lambda *a: sys.exit(9)\nraise ValueError('v')\n", "ValueError", 9),
            "hook_exits_with_text": ("import sys\nsys.excepthook = lambda *a: sys.exit('bye')\nraise ValueError('v')\n",
                                     "ValueError", 1),
            "hook_missing": ("import sys\ndel sys.excepthook\nraise ValueError('no hook')\n", "ValueError", 1),
            "hook_none": ("import sys\nsys.excepthook = None\nraise ValueError('none')\n", "ValueError", 1),
            "hook_raises": ("import sys\ndef hook(t, v, tb):\n    print('hook sees', t.__name__)\n"
                            "    raise RuntimeError('hook broke')\nsys.excepthook = hook\nraise ValueError('original')\n",
                            "ValueError", 1),
            "interrupt": ("print('a', flush=True)\nraise KeyboardInterrupt\n", "KeyboardInterrupt", -signal.SIGINT),
            "interrupt_subclass": ("class K(KeyboardInterrupt): pass\nraise K\n", "K", 1),
            "interrupt_blocked": ("import signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n"
                                  "raise KeyboardInterrupt\n", "KeyboardInterrupt", 130),
            "interrupt_hook_exits": ("import sys\nsys.excepthook = lambda *a: sys.exit(4)\nraise KeyboardInterrupt\n",
                                     "KeyboardInterrupt", 4),
            "interrupt_output_at_exit": ("import sys\nclass Late:\n    def __del__(self, out=sys.stdout):\n        out.write('late')\n"
                                         "late = Late()\nraise KeyboardInterrupt\n", "KeyboardInterrupt", -signal.SIGINT),
            # The streams' flush at exit fails: the interpreter exits 120.
            "stdout_closed": ("import os\nprint('buffered')\nos.close(1)\n", None, 120),
            "stdout_flush_raises": ("import sys\nclass W:\n    def write(self, s):\n        return len(s)\n"
                                    "    def flush(self):\n        raise ValueError('no flush')\n"
                                    "    def __repr__(self):\n        return '<W>'\nsys.stdout = W()\n", None, 120),
            "stderr_flush_raises": ("import sys\nclass W:\n    def write(self, s):\n        return len(s)\n"
                                    "    def flush(self):\n        raise ValueError('no flush')\nsys.stderr = W()\n", None, 120),
            "stdout_replaced": ("import sys\nclass W:\n    def write(self, s):\n        return sys.__stdout__.write(s)\n"
                                "    def flush(self):\n        pass\nsys.stdout = W()\nprint('through the original')\n",
                                None, 0),
            # What an atexit callback raises is reported, and changes nothing.
            "atexit_builtin_exits": ("import atexit, sys\natexit.register(sys.exit, 7)\nprint('end')\n", None, 0),
            "atexit_raises": ("import atexit\nclass Bye:\n    def __call__(self):\n        raise RuntimeError('in atexit')\n"
                              "    def __repr__(self):\n        return '<Bye>'\natexit.register(Bye())\nprint('end')\n", None, 0),
            "stdout_closed_and_exit": ("import os, sys\nprint('buffered')\nos.close(1)\nsys.exit(3)\n", None, 120),
            "hostile_class": ("class Meta(type):\n    def __getattribute__(cls, name):\n"
                              "        if name in ('__qualname__', '__name__'):\n            raise SystemExit(5)\n"
                              "        if name == '__module__':\n            raise KeyboardInterrupt\n"
                              "        return super().__getattribute__(name)\n"
                              "class E(Exception, metaclass=Meta):\n"
                              "    def with_traceback(self, tb):\n        raise SystemExit(6)\n"
                              "raise E('hostile')\n", "E", 1),
        }
        # SystemExit's code as the interpreter takes it: a C long's low 8
        # bits, 255 out of a C long's range, anything else printed and 1.
        for code, status in (("None", 0), ("-1", 255), ("256", 0), ("True", 1), ("2**31", 0), ("2**32 + 3", 3),
                             ("2**63 - 1", 255), ("2**63", 255), ("2**70", 255), ("-2**70", 255), ("1.5", 1),
                             ("'msg'", 1)):
            cases["exit %s" % code] = ("raise SystemExit(%s)\n" % code, None, status)
        # By the value of an int, a subclass's whatever its own operators
        # say, and never an object whose __class__ claims int.
        cases["exit int subclass"] = ("class E(int):\n    __and__ = lambda s, o: 0\nraise SystemExit(E(3))\n", None, 3)
        cases["exit int subclass, comparisons raise"] = (
            "class B(int):\n    def __lt__(s, o):\n        raise RuntimeError\n    __le__ = __gt__ = __ge__ = __lt__\n"
            "raise SystemExit(B(5))\n", None, 5)
        cases["exit fake int"] = ("class X:\n    __class__ = int\n    def __str__(self):\n        return 'fake-int'\n"
                                  "raise SystemExit(X())\n", None, 1)
        for name, (source, error_type, status) in cases.items():
            with self.subTest(name), tempfile.TemporaryDirectory() as d:
                script = self._write_job(d, source)
                bare = subprocess.run([sys.executable, "-I", "-S", script], capture_output=True, text=True, cwd=d)
                out = self._run_job(d, script, ["--job-fd", "JOB"])
                self.assertEqual(bare.returncode, status, bare.stderr)
                self.assertEqual((out.returncode, out.stdout, out.stderr), (bare.returncode, bare.stdout, bare.stderr))
                outcome = os.path.join(d, "o.json")
                if status < 0:
                    # Killed before its outcome, as natively the sandbox's
                    # init then writes one naming the signal.
                    self.assertFalse(os.path.exists(outcome))
                    continue
                with open(outcome) as f:
                    doc = json.load(f)
                error = doc.get("error") and doc["error"]["type"]
                self.assertEqual((doc["exit_code"], error), (status, error_type))

    def test_site_builtins_as_python_script(self):
        # `python script.py` has site's builtins (exit, quit, help,
        # copyright, credits, license) though the runner starts with -S:
        # what a script prints of them and how exit() ends it are the
        # interpreter's with site (python -I), sys.path its without.
        import subprocess
        source = ("import sys\n"
                  "print(sys.flags.no_site, exit, quit, type(help).__name__, repr(copyright)[:40], repr(credits)[:40])\n"
                  "print(repr(license))\n"
                  "print('site directories', any('-packages' in p for p in sys.path))\n"
                  "exit(5)\n")
        with tempfile.TemporaryDirectory() as d:
            script = self._write_job(d, source)
            bare = subprocess.run([sys.executable, "-I", script], capture_output=True, text=True, cwd=d)
            out = self._run_job(d, script, ["--job-fd", "JOB"])
        self.assertEqual(bare.returncode, 5, bare.stderr)
        expected = bare.stdout.replace("0 Use", "1 Use", 1).replace("site directories True", "site directories False")
        self.assertEqual((out.returncode, out.stdout, out.stderr), (5, expected, ""))

    def test_job_descriptor_run_exits_as_the_interpreter_does(self):
        # The runner skips the interpreter's teardown, not what a script
        # sees of its exit: threads joined, atexit, streams flushed, and the
        # script's own globals released as `python script.py` releases
        # them (an open file flushed, __del__, a generator's finally).
        import subprocess
        with tempfile.TemporaryDirectory() as d:
            script = self._write_job(d, "import atexit, sys, threading, time, types\n"
                                        "atexit.register(lambda: print('atexit'))\n"
                                        "threading.Thread(target=lambda: (time.sleep(0.2), print('thread'))).start()\n"
                                        "sys.stdout.write('unflushed')\n"
                                        "sys.path.insert(0, %r)\n"
                                        "import helper\n"
                                        "left_open = open(%r, 'w')\n"
                                        "left_open.write('buffered')\n"
                                        "class Late:\n"
                                        "    def __del__(self, marker=%r, write=open):\n"
                                        "        write(marker, 'w').close()\n"
                                        "class Mine:\n"
                                        "    def __del__(self):\n"
                                        "        print('del')\n"
                                        "def gen():\n"
                                        "    try:\n"
                                        "        yield\n"
                                        "    finally:\n"
                                        "        print('finally')\n"
                                        "suspended = gen(); next(suspended)\n"
                                        "mine = Mine()\n"
                                        "other = sys.modules['late'] = types.ModuleType('late')\n"
                                        "other.late = Late()\n"
                                        "sys.exit(7)\n" % (d, os.path.join(d, "left-open"), os.path.join(d, "teardown")))
            with open(os.path.join(d, "helper.py"), "w") as f:
                f.write("held = open(%r, 'w')\nheld.write('held by a module')\n" % os.path.join(d, "held"))
            expected = "unflushedthread\natexit\nfinally\ndel\n"
            for mode in ("--job-fd", "--argv"):
                with self.subTest(mode=mode):
                    for name in ("left-open", "held", "teardown"):
                        if os.path.exists(os.path.join(d, name)):
                            os.remove(os.path.join(d, name))
                    argv = ["--job-fd", "JOB"] if mode == "--job-fd" else ["--argv", "/dev/fd/JOB"]
                    out = self._run_job(d, script, argv)
                    self.assertEqual((out.returncode, out.stdout), (7, expected), out.stderr)
                    with open(os.path.join(d, "o.json")) as f:
                        self.assertEqual(json.load(f)["exit_code"], 7)
                    with open(os.path.join(d, "left-open")) as f:
                        self.assertEqual(f.read(), "buffered")
                    with open(os.path.join(d, "held")) as f:
                        self.assertEqual(f.read(), "held by a module")
                    # The interpreter was not torn down: another module's
                    # objects were not finalized at exit.
                    self.assertFalse(os.path.exists(os.path.join(d, "teardown")))
            # As a control, the same script run the ordinary way: the same
            # output, and the teardown finalizes the other module's object.
            out = subprocess.run([sys.executable, "-I", "-S", script], capture_output=True, text=True)
            self.assertEqual((out.returncode, out.stdout), (7, expected), out.stderr)
            self.assertTrue(os.path.exists(os.path.join(d, "teardown")))
            with open(os.path.join(d, "left-open")) as f:
                self.assertEqual(f.read(), "buffered")

    def test_collector_walks_only_the_jobs_objects(self):
        # Before the job the runner freezes what exists (gc.freeze): the
        # collector then walks only the job's objects, and a cycle the
        # script leaves is still collected at exit, its __del__ run.
        # sys.orig_argv is the command that runs the script as the runner
        # does, on either form of the job.
        with tempfile.TemporaryDirectory() as d:
            script = self._write_job(d, "import gc, sys\n"
                                        "print(gc.get_freeze_count() > 1000, len(gc.get_objects()) < 200)\n"
                                        "print(sys.orig_argv == [sys.executable, '-I', '-S'] + sys.argv)\n"
                                        "class Cycle:\n"
                                        "    def __del__(self):\n"
                                        "        print('collected')\n"
                                        "c = Cycle(); c.me = c\n"
                                        "del c\n")
            for argv in (["--job-fd", "JOB"], ["--argv", "/dev/fd/JOB"]):
                with self.subTest(argv=argv[0]):
                    out = self._run_job(d, script, argv)
                    self.assertEqual((out.returncode, out.stdout), (0, "True True\nTrue\ncollected\n"), out.stderr)

    def test_ready_descriptor_reports_the_end(self):
        # With --ready-fd the runner says "R" on it, and its last act is to
        # close its standard descriptors and write its exit status to
        # "ended" beside the outcome; a child the script forked that ends
        # through the runner does not report; without --ready-fd nothing
        # is written.
        with tempfile.TemporaryDirectory() as d:
            script = self._write_job(d, "import os, sys\n"
                                        "if os.fork() == 0:\n"
                                        "    sys.exit(3)\n"
                                        "os.wait()\n"
                                        "print('x', os.path.exists(%r))\n"
                                        "sys.exit(300)\n" % os.path.join(d, runner.ENDED))
            for ready in (True, False):
                with self.subTest(ready=ready):
                    ended = os.path.join(d, runner.ENDED)
                    if os.path.exists(ended):
                        os.remove(ended)
                    ready_r, ready_w = os.pipe()
                    argv = ["--job-fd", "JOB"] + (["--ready-fd", str(ready_w)] if ready else [])
                    out = self._run_job(d, script, argv, (ready_w,))
                    os.close(ready_w)
                    said = os.read(ready_r, 16)
                    os.close(ready_r)
                    self.assertEqual((out.returncode, out.stdout), (300 & 0xFF, "x False\n"), out.stderr)
                    self.assertEqual(said, b"R" if ready else b"")
                    if ready:
                        with open(ended) as f:
                            self.assertEqual(f.read(), "44")
                    else:
                        self.assertFalse(os.path.exists(ended))

    def test_outcome_encoding(self):
        doc = {"exit_code": 1, "result_set": False,
               "error": {"type": "ValueError", "message": 'q"\\\n\x00\x1f\x7f\u2028\ud800é\U0001f600',
                         "traceback": "\udcff"}}
        text = runner._json_object(doc)
        text.encode("utf-8")  # valid UTF-8: no lone surrogate is left
        back = json.loads(text)
        self.assertEqual(back["error"]["message"], 'q"\\\n\x00\x1f\x7f\u2028\ufffdé\U0001f600')
        self.assertEqual(back["error"]["traceback"], "\ufffd")
        self.assertEqual((back["exit_code"], back["result_set"]), (1, False))
        self.assertEqual(runner._json_object({"a": True, "b": -3}), '{"a":true,"b":-3}')

    def test_runs_the_script_as_main(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.py")
            with open(path, "w") as f:
                f.write("import sys\nclass C: pass\n"
                        "seen = (__name__, __file__, sys.modules['__main__'].C is C, __spec__, __package__)\n"
                        "import builtins\nbuiltins._apysup_seen = seen\n")
            main = sys.modules["__main__"]
            runner._run_main(path, {})
            import builtins
            seen = builtins.__dict__.pop("_apysup_seen")
            self.assertEqual(seen, ("__main__", path, True, None, None))
            self.assertIs(sys.modules["__main__"], main)

    def test_script_not_utf8_refused_as_python_does(self):
        # `python path` names the first byte that is not UTF-8 and its line
        # when no encoding is declared; compile() of the same bytes did not.
        import subprocess
        refused = {"literal.py": b'print("caf\xe9")\n', "comment.py": b'x = 1\n# caf\xe9\ny = "\xff"\n',
                   "surrogate.py": b'"\xed\xa0\x80"\n', "late_cookie.py": b'#!/x\n\n# coding: latin-1\nx = "\xe9"\n'}
        accepted = {"cookie.py": b'# coding: latin-1\nprint("caf\xe9")\n', "second_line.py": b'#!/x\n# coding: latin-1\nx = "\xe9"\n',
                    "utf8.py": "print('café')\n".encode(), "bom.py": b'\xef\xbb\xbfx = 1\n'}
        with tempfile.TemporaryDirectory() as d:
            for name, body in list(refused.items()) + list(accepted.items()):
                path = os.path.join(d, name)
                with open(path, "wb") as f:
                    f.write(body)
                bare = subprocess.run([sys.executable, "-I", "-S", path], capture_output=True, text=True)
                if name in accepted:
                    self.assertIsNone(runner._check_utf8(body, path), name)
                    continue
                with self.assertRaises(SyntaxError) as cm:
                    runner._check_utf8(body, path)
                self.assertEqual("SyntaxError: %s\n" % cm.exception, bare.stderr, name)

    def test_installs_globals_in_main(self):
        # The Plan's globals are the script's own globals, nobody else's:
        # callable without an import, listed by globals(), rebindable.
        def get_weather(**arguments):
            return arguments
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.py")
            with open(path, "w") as f:
                f.write("import builtins\n"
                        "first = get_weather(city='Oslo')\n"
                        "listed = 'get_weather' in globals()\n"
                        "def get_weather(**a): return 'mine'\n"
                        "builtins._apysup_seen = (first, listed, get_weather())\n")
            runner._run_main(path, {"get_weather": get_weather})
            import builtins
            seen = builtins.__dict__.pop("_apysup_seen")
            self.assertEqual(seen, ({"city": "Oslo"}, True, "mine"))
            self.assertNotIn("get_weather", builtins.__dict__)

    def test_imports_nothing_heavy(self):
        # A run without capability calls loads no json, no socket, no runpy.
        import subprocess
        here = os.path.dirname(runner.__file__)
        code = ("import sys; sys.path.insert(0, %r); import apysup_runner, agent_runtime; "
                "print(sorted(m for m in ('json', 'socket', 'runpy', 'traceback', 'signal', 'enum', 're', "
                "'threading', '_agent_runtime_host') if m in sys.modules))" % here)
        out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
        self.assertEqual(out.stdout.strip(), "[]")

    def test_refused_forms(self):
        for argv in ([], self.BASE, self.BASE + ["--"], ["--prelude", "p.py", "--", "s.py"],
                     self.BASE + ["--argv", "a.json", "--", "s.py"], self.BASE + ["--argv"],
                     self.BASE + ["--unknown", "x", "--", "s.py"],
                     self.BASE + ["--job-fd", "3", "--argv", "a"], self.BASE + ["--job-fd", "2"],
                     self.BASE + ["--job-fd", "x"], self.BASE + ["--job-fd", "3", "--ready-fd", "-1"],
                     self.BASE + ["--ready-fd", "4", "--argv", "a"], self.BASE + ["--job-fd", "3", "--", "s.py"]):
            self.assertIsNone(runner._parse(argv), argv)


if __name__ == "__main__":
    unittest.main(verbosity=1)

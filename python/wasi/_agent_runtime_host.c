/*
 * _agent_runtime_host: the WASI guest's one door to the host.
 *
 * call(request: bytes) -> bytes hands a broker call frame to the host
 * import agent_runtime_v1.host_call. The host answers with the RPC
 * response envelope (ARCHITECTURE.md), which goes to
 * _agent_runtime_wire.decode, the same pure-Python decoder the native
 * bridge uses, so both backends return the same results and raise the
 * same exceptions; or, for a call the Broker completed with a result,
 * with RESULT_MARK and the result's canonical JSON, the bytes decode
 * would have returned for its envelope (internal/sandbox/wazero,
 * completedResult), which are returned as they are: decode was 7 us of
 * a call's 50 in wasm.
 *
 * The module never interprets the envelope itself and never retries: a host
 * answer it cannot use is an ambiguous outcome, because the host may already
 * have dispatched the call.
 */
#define PY_SSIZE_T_CLEAN
#include "Python.h"

#include <stdint.h>

/* Both directions are bounded like the native transport (SPEC.md section 3). */
#define HOST_CALL_LIMIT (1 << 20)
/* host_call's answer when an interval timer of the guest came due while it
   waited (internal/sandbox/wazero/hostcall.go): the answer is still owed,
   until the call is given up. */
#define HOST_CALL_INTERRUPTED (-2)
/* The first byte of an answer that is a completed call's result itself; an
   envelope is a JSON object, '{' first. */
#define RESULT_MARK 0x00

__attribute__((import_module("agent_runtime_v1"), import_name("host_call")))
int32_t agent_runtime_v1_host_call(const uint8_t *req_ptr, uint32_t req_len,
                                   uint8_t *resp_ptr, uint32_t resp_cap);

/* raise_wire raises _agent_runtime_wire.<type_name>(error_code, message). */
static PyObject *
raise_wire(PyObject *wire, const char *type_name, const char *error_code,
           const char *message)
{
    PyObject *type = PyObject_GetAttrString(wire, type_name);
    if (type == NULL) {
        return NULL;
    }
    PyObject *exc = PyObject_CallFunction(type, "ss", error_code, message);
    Py_DECREF(type);
    if (exc == NULL) {
        return NULL;
    }
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

/* Interned once, at the first call: the wire module's name and the two
   functions of it a call runs. */
static PyObject *wire_name, *check_frame_name, *decode_name;

static Py_ssize_t
request_size(PyObject *arg)
{
    return PyBytes_Check(arg) ? PyBytes_GET_SIZE(arg) : PyByteArray_GET_SIZE(arg);
}

PyDoc_STRVAR(call_doc,
"call(request: bytes) -> bytes\n\n"
"Send one broker call frame to the host and return the canonical JSON\n"
"bytes of the result; raise the _agent_runtime_wire exceptions otherwise.");

static PyObject *
agent_runtime_host_call(PyObject *module, PyObject *arg)
{
    if (!PyBytes_Check(arg) && !PyByteArray_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "request must be bytes");
        return NULL;
    }
    /* Found by name at call time: the guest files are on sys.path only
       once the runner has started. Taken from sys.modules when it is
       there, as it is once agent_runtime is imported: a full import
       statement's path (builtins.__import__) was 5 us of every call in
       wasm. */
    if (wire_name == NULL) {
        wire_name = PyUnicode_InternFromString("_agent_runtime_wire");
        check_frame_name = PyUnicode_InternFromString("check_frame");
        decode_name = PyUnicode_InternFromString("decode");
        if (wire_name == NULL || check_frame_name == NULL || decode_name == NULL) {
            Py_CLEAR(wire_name);
            return NULL;
        }
    }
    PyObject *wire = PyImport_GetModule(wire_name);
    if (wire == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        wire = PyImport_Import(wire_name);
        if (wire == NULL) {
            return NULL;
        }
    }
    PyObject *result = NULL;
    /* Refused before anything leaves the guest, exactly as the native
       bridge refuses: zero dispatch, the same codes on both backends. */
    if (request_size(arg) > HOST_CALL_LIMIT) {
        raise_wire(wire, "CapabilityError", "frame_too_large",
                   "the call frame exceeds 1 MiB");
        goto done;
    }
    PyObject *checked = PyObject_CallMethodOneArg(wire, check_frame_name, arg);
    if (checked == NULL) {
        goto done;
    }
    Py_DECREF(checked);
    /* Read after the check, which ran Python code: a bytearray may have
       changed. The host bounds the length again. */
    const char *req = PyBytes_Check(arg) ? PyBytes_AS_STRING(arg)
                                         : PyByteArray_AS_STRING(arg);
    Py_ssize_t req_len = request_size(arg);
    uint8_t *resp = PyMem_Malloc(HOST_CALL_LIMIT);
    if (resp == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int32_t n = agent_runtime_v1_host_call(
        (const uint8_t *)req, (uint32_t)req_len,
        resp, (uint32_t)HOST_CALL_LIMIT);
    /* A timer came due during the wait, which natively interrupts the
       bridge's poll or recv(2): the handlers run now. One that raises
       gives the call up, its exception propagating as natively, and the
       host is told (a call with no frame and no room for an answer), which
       cancels it in the Broker as natively the bridge's closed connection
       does; else the wait goes on (a call with no frame). */
    while (n == HOST_CALL_INTERRUPTED) {
        if (PyErr_CheckSignals() < 0) {
            (void)agent_runtime_v1_host_call(NULL, 0, NULL, 0);
            PyMem_Free(resp);
            goto done;
        }
        n = agent_runtime_v1_host_call(NULL, 0, resp, (uint32_t)HOST_CALL_LIMIT);
    }
    if (n < 0 || n > HOST_CALL_LIMIT) {
        PyMem_Free(resp);
        raise_wire(wire, "AmbiguousOutcome", "dispatch_outcome_unknown",
                   "the host did not return a usable response; the call may "
                   "have been dispatched");
        goto done;
    }
    if (n > 1 && resp[0] == RESULT_MARK) {
        result = PyBytes_FromStringAndSize((const char *)resp + 1, n - 1);
        PyMem_Free(resp);
        goto done;
    }
    PyObject *response = PyBytes_FromStringAndSize((const char *)resp, n);
    PyMem_Free(resp);
    if (response == NULL) {
        goto done;
    }
    result = PyObject_CallMethodOneArg(wire, decode_name, response);
    Py_DECREF(response);
done:
    Py_DECREF(wire);
    return result;
}

static PyMethodDef agent_runtime_host_methods[] = {
    {"call", agent_runtime_host_call, METH_O, call_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef agent_runtime_host_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_agent_runtime_host",
    .m_doc = "Host calls from the WASI guest through agent_runtime_v1.host_call.",
    .m_size = 0,
    .m_methods = agent_runtime_host_methods,
};

PyMODINIT_FUNC
PyInit__agent_runtime_host(void)
{
    return PyModuleDef_Init(&agent_runtime_host_module);
}

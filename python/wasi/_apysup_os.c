// os.sched_getaffinity under WASI (Lib/os.py imports it from here:
// patches/python3.11/wasi-os-host.patch): the online CPUs, as the native
// guest's answers for itself (_apysup_host.c). Here pid 0 and the guest's
// own pid are the guest, any other pid is no process (ESRCH, as Linux
// answers for a negative one too); os.py wraps it with the native
// sandbox's other process, init, and the masks os.sched_setaffinity sets
// (patches/python3.11/wasi-os-sched.patch), which WASI cannot bind to a
// CPU. Its arguments are parsed and its errors worded as posixmodule.c's,
// and it names itself posix.sched_getaffinity.
//
// And posix.sched_param, the structseq os.sched_setscheduler and
// os.sched_setparam take (os.py again), made as posixmodule.c makes it:
// the same fields, name and constructor.

#define PY_SSIZE_T_CLEAN
#include "Python.h"
#include <errno.h>
#include <limits.h>
#include <unistd.h>

int apysup_online_cpus(unsigned char *mask, int len);

// Room for 4,096 CPUs (glibc's cpu_set_t holds 1,024).
#define MASK_BYTES 512

static PyObject *
sched_getaffinity(PyObject *module, PyObject *arg)
{
	// PyArg_Parse's "i", as posixmodule.c parses a pid, through a long
	// long: wasm32's long has 32 bits, and "i" would word a pid between
	// 2**31 and 2**63 as too large for a C long where Linux's says it is
	// greater than an int's maximum.
	PyObject *index = PyNumber_Index(arg);
	if (index == NULL)
		return NULL;
	long long wide = PyLong_AsLongLong(index);
	Py_DECREF(index);
	if (wide == -1 && PyErr_Occurred()) {
		if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
			PyErr_Clear();
			PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to C long");
		}
		return NULL;
	}
	if (wide > INT_MAX || wide < INT_MIN) {
		PyErr_SetString(PyExc_OverflowError,
			wide > INT_MAX ? "signed integer is greater than maximum" : "signed integer is less than minimum");
		return NULL;
	}
	int pid = (int)wide;
	if (pid != 0 && pid != getpid()) {
		errno = ESRCH;
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	unsigned char mask[MASK_BYTES] = {0};
	if (apysup_online_cpus(mask, MASK_BYTES) <= 0) {
		errno = ENOSYS;
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	PyObject *cpus = PySet_New(NULL);
	if (cpus == NULL)
		return NULL;
	for (int i = 0; i < MASK_BYTES * 8; i++) {
		if (!(mask[i / 8] >> (i % 8) & 1))
			continue;
		PyObject *cpu = PyLong_FromLong(i);
		if (cpu == NULL || PySet_Add(cpus, cpu) < 0) {
			Py_XDECREF(cpu);
			Py_DECREF(cpus);
			return NULL;
		}
		Py_DECREF(cpu);
	}
	return cpus;
}

PyDoc_STRVAR(sched_getaffinity_doc,
	"sched_getaffinity($module, pid, /)\n--\n\n"
	"Return the affinity of the process identified by pid (or the current process if zero).\n\n"
	"The affinity is returned as a set of CPU identifiers.");

PyDoc_STRVAR(sched_param_doc,
	"sched_param(sched_priority)\n--\n\n"
	"Currently has only one field: sched_priority\n\n"
	"  sched_priority\n"
	"    A scheduling parameter.");

static PyStructSequence_Field sched_param_fields[] = {
	{"sched_priority", "the scheduling priority"},
	{0},
};

static PyStructSequence_Desc sched_param_desc = {
	"posix.sched_param", sched_param_doc, sched_param_fields, 1,
};

// posixmodule.c's os_sched_param, parsed as its Argument Clinic code
// parses it: one argument, positional or named sched_priority, of any
// type (sched_setparam checks it).
static PyObject *
sched_param_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
	static const char *const keywords[] = {"sched_priority", NULL};
	static _PyArg_Parser parser = {NULL, keywords, "sched_param", 0};
	PyObject *argsbuf[1];
	PyObject *const *fastargs = _PyArg_UnpackKeywords(_PyTuple_CAST(args)->ob_item,
		PyTuple_GET_SIZE(args), kwargs, NULL, &parser, 1, 1, 0, argsbuf);
	if (fastargs == NULL)
		return NULL;
	PyObject *res = PyStructSequence_New(type);
	if (res == NULL)
		return NULL;
	Py_INCREF(fastargs[0]);
	PyStructSequence_SET_ITEM(res, 0, fastargs[0]);
	return res;
}

static PyMethodDef methods[] = {
	{"sched_getaffinity", sched_getaffinity, METH_O, sched_getaffinity_doc},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "_apysup_os", "The host's CPUs under WASI (apysup).", 0, methods,
};

PyMODINIT_FUNC
PyInit__apysup_os(void)
{
	PyObject *m = PyModule_Create(&module);
	PyObject *f = m == NULL ? NULL : PyObject_GetAttrString(m, "sched_getaffinity");
	PyObject *posix = PyUnicode_FromString("posix");
	int ok = f != NULL && posix != NULL && PyObject_SetAttrString(f, "__module__", posix) == 0;
	Py_XDECREF(f);
	Py_XDECREF(posix);
	PyTypeObject *param = ok ? PyStructSequence_NewType(&sched_param_desc) : NULL;
	if (param != NULL) {
		param->tp_new = sched_param_new;
		ok = PyModule_AddObject(m, "sched_param", (PyObject *)param) == 0;
		if (!ok)
			Py_DECREF(param);
	}
	if (!ok || param == NULL) {
		Py_XDECREF(m);
		return NULL;
	}
	return m;
}

# Ctrl-C in compiled loops: every long loop of babytris (the big-board engine's
# too: a public name, so babytris.big may cimport it) asks this every millisecond
# or so, outside parallel regions, then stops and returns normally.

cdef extern from "Python.h":
    int PyErr_CheckSignals()
    void PyErr_Clear()


cdef inline bint interrupted() noexcept nogil:
    """Whether Ctrl-C (a signal whose handler raised) came since the last call.
    Long loops call this every millisecond or so, outside parallel regions,
    then stop and return normally; their Python caller raises KeyboardInterrupt
    (so the handler's exception is cleared here, not left pending)."""
    cdef int status
    with gil:
        status = PyErr_CheckSignals()
        if status != 0:
            PyErr_Clear()
    return status != 0

// Package spin lets one end of a request-answer socket poll for the other
// end's bytes for a short while before it blocks in read(2).
//
// On this project's machines (2-CPU VMs whose idle CPUs halt at once) a
// thread woken from a blocking read runs 20-30 us after the write that
// woke it, and that write takes 10-15 us itself; a host call crosses a
// socket twice, so these wake-ups were 75 of a wazero host call's 180 us.
// An end that expects an answer within tens of microseconds polls for it
// first (Readable), and one that waits for a peer's next request polls
// only while requests come that close together (Adaptive): a peer that
// computes between its requests costs one window, then none
// (RATIONALE.md, "The call channel polls before it sleeps").
//
// Both poll with poll(2) and a zero timeout, and read nothing: what they
// saw is then read as before, by the caller's blocking read.
package spin

// Package foreground lets a long-running local command own its terminal's
// Ctrl-C.
//
// A terminal sends the signal of Ctrl-C to its whole foreground process
// group. Run as a make recipe (make dev), that group holds make as well as
// the command, and GNU make, interrupted, removes its target and kills
// itself with the same signal: the shell sees status 130 even when the
// command stopped cleanly and exited 0. Take moves the command into a
// process group of its own and hands that group the terminal, so Ctrl-C
// reaches the command alone; make then sees the command's own exit status
// and passes it on.
package foreground

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// Take makes this process the leader of a new process group and that group
// the foreground group of the controlling terminal on tty, when tty is a
// terminal and this process is in its foreground group (an interactive run,
// not a background job or a pipe). It returns a function that gives the
// terminal back to the group that had it, and whether it took the terminal;
// when it did not, nothing changed and restore does nothing.
//
// While this process holds the terminal, Ctrl-Z (SIGTSTP) is ignored: a
// process group that is not the shell's job cannot be stopped and resumed by
// the shell's job control, and stopping it would leave the terminal with a
// stopped foreground group.
func Take(tty *os.File) (restore func(), took bool) {
	fd := int(tty.Fd())
	previous, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil || previous != unix.Getpgrp() {
		return func() {}, false
	}
	// Changing the foreground group from a group that is not (yet, or any
	// longer) the foreground one raises SIGTTOU, which would stop us.
	signal.Ignore(syscall.SIGTTOU)
	if err := unix.Setpgid(0, 0); err != nil {
		signal.Reset(syscall.SIGTTOU)
		return func() {}, false
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpid()); err != nil {
		// Back into the group we came from, so nothing changed.
		_ = unix.Setpgid(0, previous)
		signal.Reset(syscall.SIGTTOU)
		return func() {}, false
	}
	signal.Ignore(syscall.SIGTSTP)
	return func() {
		_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, previous)
	}, true
}

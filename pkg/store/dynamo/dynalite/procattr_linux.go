package dynalite

import "syscall"

// procAttr makes the kernel kill dynalite when the test binary dies, however
// it dies (a panic, a -timeout, a kill), since the shared server has no test
// whose cleanup could stop it. Strictly the signal follows the OS thread that
// started the process, but Go only ends threads of goroutines that exit while
// locked to them, which the testing goroutines never are.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

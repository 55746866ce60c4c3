//go:build !linux

package dynalite

import "syscall"

// procAttr has no way to tie dynalite's life to the test binary's outside
// Linux; Stop, called from TestMain, ends it on a normal exit.
func procAttr() *syscall.SysProcAttr { return nil }

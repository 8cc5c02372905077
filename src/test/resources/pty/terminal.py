"""A terminal for a test: runs a command on a new pseudo-terminal, keeps every byte it writes there, and
optionally hangs the terminal up (closes its master side, as a closed window or a dropped ssh session does) once
a file appears.

usage: terminal.py CAPTURE [--hangup-when FILE] [--timeout S] -- COMMAND...
Prints "exit N" or "signal N" for the command, or "timeout" when it outlives the limit (it is then killed).
"""
import os
import pty
import select
import signal
import sys
import time


def main(argv):
    split = argv.index("--")
    opts, command = argv[:split], argv[split + 1:]
    capture = opts[0]
    hangup_when = opts[opts.index("--hangup-when") + 1] if "--hangup-when" in opts else None
    timeout = float(opts[opts.index("--timeout") + 1]) if "--timeout" in opts else 120.0
    pid, master = pty.fork()
    if pid == 0:
        os.execvp(command[0], command)
    deadline = time.monotonic() + timeout
    status = None
    with open(capture, "wb") as out:
        while master is not None:
            if hangup_when is not None and os.path.exists(hangup_when):
                os.close(master)
                master = None
                break
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    data = b""
                if not data:
                    break
                out.write(data)
                out.flush()
            if time.monotonic() > deadline:
                break
    while status is None and time.monotonic() < deadline:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
        else:
            time.sleep(0.05)
    if master is not None:
        os.close(master)
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        print("timeout")
    elif os.WIFSIGNALED(status):
        print("signal %d" % os.WTERMSIG(status))
    else:
        print("exit %d" % os.WEXITSTATUS(status))


if __name__ == "__main__":
    main(sys.argv[1:])

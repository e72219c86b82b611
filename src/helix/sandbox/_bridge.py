"""The in-sandbox end of the egress proxy for tiers without a network.

A command in its own network namespace sees only its own loopback. The bridge, a
standalone script run by the sandbox's Python, listens on ``127.0.0.1:PORT`` inside
and carries each connection to the proxy's Unix socket (bound into the sandbox), then
runs the command as its child and exits as it does.
"""

BRIDGE_PORT = 3128

BRIDGE_SCRIPT = r"""
import os, select, signal, socket, sys

port, path, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", port))
listener.listen(64)
child = os.fork()
if child == 0:
    listener.close()
    os.execv(argv[0], argv)
peers = {}
while True:
    pid, status = os.waitpid(child, os.WNOHANG)
    if pid:
        break
    readable, _, _ = select.select([listener, *peers], [], [], 0.05)
    for sock in readable:
        if sock is listener:
            inside, _ = listener.accept()
            outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                outside.connect(path)
            except OSError:
                inside.close()
                continue
            peers[inside], peers[outside] = outside, inside
            continue
        other = peers.get(sock)
        if other is None:
            continue
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if data:
            try:
                other.sendall(data)
                continue
            except OSError:
                pass
        for end in (sock, other):
            peers.pop(end, None)
            end.close()
if os.WIFSIGNALED(status):
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.waitstatus_to_exitcode(status))
"""

"""The in-sandbox end of the egress proxy for tiers without a network.

A command in its own network namespace sees only its own loopback. The bridge, a
standalone script run by the sandbox's Python, listens on ``127.0.0.1:PORT`` inside
and carries each connection to the proxy's Unix socket (bound into the sandbox), then
runs the command as its child and exits as it does. It imports only C modules
(``_socket``, ``_signal``, ``select``): their Python wrappers pull in ``enum`` and
``selectors``, which doubled its start-up time.
"""

BRIDGE_PORT = 3128

BRIDGE_SCRIPT = r"""
import _signal, _socket, os, select, sys

port, path, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", port))
listener.listen(64)
child = os.fork()
if child == 0:
    listener.close()
    os.execv(argv[0], argv)
try:
    exited, tick = [os.pidfd_open(child)], None  # readable once the command has exited
except (AttributeError, OSError):
    exited, tick = [], 0.05
peers = {}
while True:
    pid, status = os.waitpid(child, os.WNOHANG)
    if pid:
        break
    readable, _, _ = select.select([listener, *exited, *peers], [], [], tick)
    for sock in readable:
        if sock in exited:
            continue
        if sock is listener:
            inside = _socket.socket(fileno=listener._accept()[0])
            outside = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
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
    _signal.signal(os.WTERMSIG(status), _signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.waitstatus_to_exitcode(status))
"""

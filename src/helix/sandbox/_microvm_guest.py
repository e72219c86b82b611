"""What runs inside a microVM: its init (a busybox script) and Helix's guest agent.

The init mounts the kernel's file systems, loads the virtio and 9p modules, turns on
the loopback, forbids new user namespaces, mounts the host's ``/usr`` (read-only) and
starts the agent with the host's ``python3``. Both 9p shares, ``/usr`` and the world,
are carried over a virtio-serial port of their own (``USR_PORT``, ``WORLD_PORT``,
through a relay: ``USR_RELAY``) whose host end Helix serves (``_ninep``): QEMU has no
9p device, so nothing keeps it from migrating the guest. The agent speaks a framed protocol on
a port of its own (``FRAME``: kind, channel, length, then the payload):

* host → guest: ``S`` setup (JSON: the world's path, paths to hide, the command
  user, limits, environment), ``O`` open a channel (JSON: argv, ``exec`` or
  ``stream``, the output cap), ``I`` stdin bytes, ``E`` end of stdin, ``K`` kill the
  channel's process group, ``F`` freeze every command (the box's cgroup), ``T`` thaw
  them (after the guest's clock is set again from the host's);
* guest → host: ``H`` hello (the agent runs), ``R`` ready (JSON; ``error`` when
  setup failed), ``D`` output bytes, ``X`` the channel's process ended (JSON: exit
  code, bytes dropped past the cap), ``F``/``T`` frozen/thawed (JSON; ``error``).

A checkpoint freezes the commands first: a frozen task is never inside a system call,
so no 9p request of theirs is in flight while QEMU writes the guest out.

Setup (as the guest's root) mounts the world by 9p at its own path, masks the hidden
paths with empty mounts, gives ``/tmp`` a tmpfs of its own, puts commands in a
``pids`` cgroup, then drops, for everything the agent starts, every capability from
the bounding set and sets ``no_new_privs``. Each command runs in a session of its own
as the world's owner (on the host) with no capabilities; a timeout or cancellation
kills its process group. The control files a command could use against the agent
(the serial port, the cgroups' ``cgroup.procs``) are handed to ``nobody``, so even a
command running as uid 0 cannot open or write them.
"""

from __future__ import annotations

FRAME = "!cII"
"""A frame's header: kind (one byte), channel, payload length (network order)."""
MAX_FRAME = 1 << 20
"""The largest payload either side sends (or accepts) in one frame."""
PORT_NAME = "helix.agent"
BOX_STATE = "/run/helix-microvm-box"
"""The box's state folder inside the guest (a tmpfs, outside the world)."""
USR_PORT, WORLD_PORT = "helix.usr", "helix.world"
"""The virtio-serial ports the guest's ``/usr`` and world are served over (9P2000.L)."""
MSIZE = 262144
"""The 9p message size the guest asks for (its largest read or write)."""
USR_RELAY, WORLD_RELAY = 5640, 5641
"""The loopback ports in the guest where each share's relay waits for its one mount.

The kernel's 9p client cannot write to a virtio-serial port itself (no ``write_iter``),
so a busybox ``nc`` carries each share between the kernel's TCP connection and the
port: it listens once, before any command runs, and then takes no other connection."""
WAITING = b"helix-microvm-waiting\n"
"""What the init writes on the agent's port when it waits for the host's go-ahead."""

INIT = """#!/helix/busybox sh
B=/helix/busybox
$B mount -t proc proc /proc
$B mount -t sysfs sys /sys
$B mount -t devtmpfs dev /dev
$B mkdir -p /dev/pts /dev/shm /run /tmp
$B mount -t tmpfs -o mode=0755,size=65536k run /run
$B mount -t tmpfs -o mode=1777,size=65536k shm /dev/shm
for m in $(cat /helix/modules); do $B insmod "/helix/modules.d/$m" 2>/dev/null; done
$B ip link set lo up
echo 0 > /proc/sys/user/max_user_namespaces
find_port() {
  found=
  while [ -z "$found" ]; do
    for p in /sys/class/virtio-ports/*; do
      [ "$(cat "$p/name" 2>/dev/null)" = "$1" ] && found=/dev/${p##*/}
    done
    [ -n "$found" ] || $B usleep 10000
  done
}
find_port helix.agent
exec 3<>"$found"
echo "$WAITING" >&3
go=
until [ "$go" = go ]; do  # a read while no host is connected ends at once, empty
  read -r go <&3 || $B usleep 20000
done
find_port helix.usr
$B nc -l -p $USR_RELAY -e $B nc -f "$found" 3>&- &
i=0
until $B mount -t 9p -o trans=tcp,port=$USR_RELAY,version=9p2000.L,ro,msize=$MSIZE,cache=loose \\
    127.0.0.1 /usr 2>/dev/null; do
  i=$((i+1))
  [ "$i" -lt 250 ] || { echo "helix: /usr did not mount"; $B dmesg | $B tail -n 3; $B poweroff -f; }
  $B usleep 20000
done
exec 3>&-
exec /usr/bin/python3 -S -I /helix/agent.py
""".replace("$WAITING", WAITING.decode().strip()).replace("$MSIZE", str(MSIZE))
INIT = INIT.replace("$USR_RELAY", str(USR_RELAY))
"""The guest's init. It stops at one point, told ``WAITING`` on the agent's port, until
the host answers a line: a template (``_microvm_template``) is the guest frozen there,
booted once, and every box started from it goes on from that line."""

AGENT = r"""
import _socket, ctypes, json, os, resource, selectors, signal, struct, sys, time
FRAME, MAX_FRAME, GRACE, BRIDGED, MSIZE = "!cII", 1 << 20, 1.0, 1 << 31, $MSIZE
WORLD_RELAY = $WORLD_RELAY
HEAD = struct.calcsize(FRAME)
CG = "/sys/fs/cgroup"

def port(wanted):
    base = "/sys/class/virtio-ports"
    for _ in range(500):
        for name in os.listdir(base) if os.path.isdir(base) else ():
            with open(f"{base}/{name}/name") as f:
                if f.read().strip() == wanted:
                    return f"/dev/{name}"
        time.sleep(0.01)
    sys.exit(f"helix: no port {wanted}")

FD = os.open(port("helix.agent"), os.O_RDWR)

def send(kind, chan, data=b""):
    for at in range(0, max(len(data), 1), MAX_FRAME):
        piece = data[at:at + MAX_FRAME]
        out = memoryview(struct.pack(FRAME, kind, chan, len(piece)) + piece)
        while out:
            out = out[os.write(FD, out):]

def mount(kind, source, target, opts=""):
    args = ["/helix/busybox", "mount", "-t", kind] + (["-o", opts] if opts else [])
    if run(*args, source, target):
        raise OSError(f"mount {kind} on {target} failed")

def run(*argv):
    pid = os.fork()
    if pid == 0:
        os.execv(argv[0], list(argv))
    return os.waitpid(pid, 0)[1]

def relay(device, port):
    # a share's relay: listens once on the guest's loopback, then carries it to the port
    if os.fork() == 0:
        B = "/helix/busybox"
        os.execv(B, [B, "nc", "-l", "-p", str(port), "-e", B, "nc", "-f", device])

def reseed(seed):
    import fcntl
    fd = os.open("/dev/urandom", os.O_WRONLY)
    try:
        fcntl.ioctl(fd, 0x40085203, struct.pack("ii", len(seed) * 8, len(seed)) + seed)
        fcntl.ioctl(fd, 0x5207)  # RNDADDENTROPY, then RNDRESEEDCRNG
    finally:
        os.close(fd)

def setup(cfg):
    reseed(bytes.fromhex(cfg["seed"]))  # a box from a template shares its random state
    run("/helix/busybox", "hwclock", "-s", "-u")  # and its clock: the RTC is the host's
    world = cfg["world"]
    if world != "/tmp":
        mount("tmpfs", "tmp", "/tmp", f"mode=1777,size={cfg['tmp_bytes']}")
    os.makedirs(cfg["state"], mode=0o700, exist_ok=True)
    mount("tmpfs", "state", cfg["state"], "mode=0700,size=67108864")
    os.chown(cfg["state"], cfg["uid"], cfg["gid"])
    os.makedirs(world, exist_ok=True)
    relay(port("helix.world"), WORLD_RELAY)
    opts = f"trans=tcp,port={WORLD_RELAY},version=9p2000.L,msize={MSIZE},cache=none"
    for _ in range(250):
        if not run("/helix/busybox", "mount", "-t", "9p", "-o", opts, "127.0.0.1", world):
            break
        time.sleep(0.02)
    else:
        raise OSError("the world did not mount")
    for path in cfg["hidden"]:
        if os.path.isdir(path) and not os.path.islink(path):
            mount("tmpfs", "hidden", path, "mode=0755,size=4096,ro")
        elif os.path.lexists(path) and not os.path.islink(path):
            mount("none", "/dev/null", path, "bind")
    mount("cgroup2", "cgroup", CG)
    with open(f"{CG}/cgroup.subtree_control", "w") as f:
        f.write("+pids")
    os.makedirs(f"{CG}/box", exist_ok=True)
    with open(f"{CG}/box/pids.max", "w") as f:
        f.write(str(cfg["pids"]))
    for path in (f"{CG}/cgroup.procs", f"{CG}/box/cgroup.procs", f"{CG}/box/pids.max"):
        os.chown(path, 65534, 65534)
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP (past the last one: EINVAL)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    for name in os.listdir("/dev"):
        if name.startswith("vport"):
            os.chown(f"/dev/{name}", 65534, 65534)
            os.chmod(f"/dev/{name}", 0o600)

def freeze(frozen):
    # the box's cgroup frozen (1) or thawed (0); frozen means no task is in a system call
    if not frozen:
        run("/helix/busybox", "hwclock", "-s", "-u")  # a restored guest's clock is stale
    with open(f"{CG}/box/cgroup.freeze", "w") as f:
        f.write("1" if frozen else "0")
    want = f"frozen {1 if frozen else 0}"
    for _ in range(3000):
        with open(f"{CG}/box/cgroup.events") as f:
            if want in f.read().splitlines():
                return b"{}"
        time.sleep(0.01)
    return json.dumps({"error": f"the box's processes did not reach {want!r}"}).encode()

class Channel:
    def __init__(self, chan, spec, cfg):
        self.chan, self.stream = chan, spec["mode"] == "stream"
        self.room, self.dropped, self.ended, self.pending = spec.get("max", 1 << 62), 0, None, b""
        self.close_after = False
        uid, gid, cgroup = cfg["uid"], cfg["gid"], f"{CG}/box/cgroup.procs"
        def enter():
            fd = os.open(cgroup, os.O_WRONLY)
            os.write(fd, b"0")
            os.close(fd)
            for which, value in cfg["rlimits"]:
                resource.setrlimit(which, (value, value))
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
        out_r, out_w = os.pipe()
        in_r, in_w = os.pipe() if self.stream else (os.open("/dev/null", os.O_RDONLY), -1)
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                os.dup2(in_r, 0)
                os.dup2(out_w, 1)
                os.dup2(out_w if not self.stream else os.open("/dev/null", os.O_WRONLY), 2)
                os.closerange(3, 65536)
                os.chdir(spec.get("cwd") or cfg["world"])
                enter()
                os.execvpe(spec["argv"][0], spec["argv"], cfg["env"])
            except BaseException as error:
                os.write(2, f"helix: {spec['argv'][0]}: {error}\n".encode())
            os._exit(127)
        os.close(out_w)
        os.close(in_r)
        self.pid, self.out, self.inp = pid, out_r, in_w
        self.pidfd = os.pidfd_open(pid)
        if in_w >= 0:
            os.set_blocking(in_w, False)

    def output(self, data):
        if self.stream:
            send(b"D", self.chan, data)
            return
        keep = data[:max(self.room, 0)]
        self.room -= len(keep)
        self.dropped += len(data) - len(keep)
        if keep:
            send(b"D", self.chan, keep)

    def kill(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass

    def end_input(self):
        os.close(self.inp)

class Bridge:
    # A connection to the proxy port inside, carried to the host's proxy.
    def __init__(self, chan, fd):
        self.chan, self.sock, self.stream, self.ended = chan, _socket.socket(fileno=fd), True, None
        self.sock.setblocking(False)
        self.out, self.inp, self.pending, self.close_after = fd, os.dup(fd), b"", False
        self.read_done = self.write_done = False
        send(b"C", chan)

    def output(self, data):
        send(b"D", self.chan, data)

    def end_input(self):
        try:
            self.sock.shutdown(_socket.SHUT_WR)
        except OSError:
            pass
        os.close(self.inp)
        self.write_done = True

    def kill(self):
        pass

def main():
    sel, chans, buf, cfg = selectors.DefaultSelector(), {}, b"", None
    send(b"H", 0)
    sel.register(FD, selectors.EVENT_READ, ("port", None))
    bridged = [BRIDGED]
    def drop_in(ch):
        if ch.inp >= 0:
            if ch.pending:
                sel.unregister(ch.inp)
            ch.end_input()
            ch.inp, ch.pending = -1, b""
        settle(ch)
    def settle(ch, abort=False):
        if not isinstance(ch, Bridge) or not (abort or (ch.read_done and ch.write_done)):
            return
        if ch.out >= 0 and not ch.read_done:
            sel.unregister(ch.out)
        if ch.inp >= 0:
            if ch.pending:
                sel.unregister(ch.inp)
            os.close(ch.inp)
        ch.sock.close()
        ch.out = ch.inp = -1
        chans.pop(ch.chan, None)
    def listen(port):
        listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
        listener.setblocking(False)
        sel.register(listener.fileno(), selectors.EVENT_READ, ("listen", listener))
    def finish(ch):
        if ch.out >= 0:
            sel.unregister(ch.out)
            os.close(ch.out)
            ch.out = -1
        drop_in(ch)
        code = os.waitpid(ch.pid, 0)[1]
        send(b"X", ch.chan, json.dumps(
            {"code": os.waitstatus_to_exitcode(code), "dropped": ch.dropped}).encode())
        del chans[ch.chan]
    while True:
        now = time.monotonic()
        waits = [c.ended + GRACE - now for c in chans.values() if c.ended is not None]
        for key, mask in sel.select(max(min(waits), 0) if waits else None):
            what, ch = key.data
            if what == "port":
                data = os.read(FD, 1 << 20)
                if not data:
                    time.sleep(0.05)  # the host is not connected (yet, or again)
                    continue
                buf += data
                while len(buf) >= HEAD:
                    kind, chan, size = struct.unpack(FRAME, buf[:HEAD])
                    if kind not in b"SOIEKZFT" or size > MAX_FRAME:
                        sys.exit("helix: a malformed frame from the host")
                    if len(buf) < HEAD + size:
                        break
                    body, buf = buf[HEAD:HEAD + size], buf[HEAD + size:]
                    c = chans.get(chan)
                    if kind == b"S":
                        try:
                            cfg = json.loads(body)
                            setup(cfg)
                            if cfg.get("bridge"):
                                listen(cfg["bridge"])
                            send(b"R", 0, b"{}")
                        except Exception as error:
                            send(b"R", 0, json.dumps({"error": str(error)}).encode())
                    elif kind == b"O" and cfg is not None and c is None:
                        c = Channel(chan, json.loads(body), cfg)
                        chans[chan] = c
                        sel.register(c.out, selectors.EVENT_READ, ("out", c))
                        sel.register(c.pidfd, selectors.EVENT_READ, ("exit", c))
                    elif kind == b"I" and c is not None and c.inp >= 0 and c.stream:
                        if not c.pending:
                            sel.register(c.inp, selectors.EVENT_WRITE, ("in", c))
                        c.pending += body
                    elif kind == b"E" and c is not None:
                        if c.pending:
                            c.close_after = True
                        else:
                            drop_in(c)
                    elif kind == b"K" and c is not None:
                        c.kill()
                    elif kind == b"Z" and isinstance(c, Bridge):
                        settle(c, abort=True)
                    elif kind in b"FT" and cfg is not None:
                        send(kind, 0, freeze(kind == b"F"))
            elif what == "in":
                try:
                    c_sent = os.write(ch.inp, ch.pending[:65536])
                except BlockingIOError:
                    continue
                except OSError:
                    drop_in(ch)
                    continue
                ch.pending = ch.pending[c_sent:]
                if not ch.pending:
                    sel.unregister(ch.inp)
                    if ch.close_after:
                        ch.end_input()
                        ch.inp = -1
                        settle(ch)
            elif what == "listen":
                try:
                    fd = ch._accept()[0]
                except OSError:
                    continue
                bridged[0] += 1
                b = chans[bridged[0]] = Bridge(bridged[0], fd)
                sel.register(b.out, selectors.EVENT_READ, ("out", b))
            elif what == "out" and isinstance(ch, Bridge):
                try:
                    data = os.read(ch.out, 65536)
                except OSError:
                    data = None
                if data:
                    ch.output(data)
                elif data is None:
                    send(b"Z", ch.chan)
                    settle(ch, abort=True)
                else:
                    send(b"E", ch.chan)
                    sel.unregister(ch.out)
                    ch.read_done = True
                    settle(ch)
            elif what == "out":
                data = os.read(ch.out, 65536)
                if data:
                    ch.output(data)
                else:
                    sel.unregister(ch.out)
                    os.close(ch.out)
                    ch.out = -1
                    if ch.ended is not None:
                        finish(ch)
            elif what == "exit":
                sel.unregister(ch.pidfd)
                os.close(ch.pidfd)
                ch.ended = time.monotonic()
                if ch.out < 0:
                    finish(ch)
        now = time.monotonic()
        for c in [c for c in chans.values() if c.ended is not None and now - c.ended >= GRACE]:
            finish(c)

main()
""".replace("$MSIZE", str(MSIZE)).replace("$WORLD_RELAY", str(WORLD_RELAY))

#!/usr/bin/env python3
"""Record how Linux md (Debian's 6.1 kernel under QEMU/TCG) passes host fsyncs to its members.

usage: record.py --out data/md-flush/cases.json [--runs 3] [--only ID,..] [--smp 1]

Each case: a fresh array (mdadm --create --assume-clean, metadata 1.2, no bitmap) on sparse
virtio members, one warm-up write at the array's end (the array is then 'active', and with
safe_mode_delay 0 no superblock write, with its flushes, falls inside the measurement), the
members' /sys/block/X/stat read, fsyncgen run on /dev/md0, sync, md idle, stat read again.
Member flushes are field 16 of the stat file (flush_ios, Linux 5.5 and later).

The kernel and the base initramfs (busybox, mdadm, the md and virtio modules) come from the
mdio-oracle's build.sh (Debian packages through apt-get); this script adds fsyncgen, its own
init and the case script as a second cpio archive.
"""
import argparse, json, os, re, shutil, subprocess, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.environ.get("MDIO_ORACLE") or os.path.join(HERE, "..", "..", "..", "shared", "mdio-oracle")
WORK = os.environ.get("MDIO_WORK") or os.path.join(os.path.expanduser("~"), ".cache", "mdio-oracle")
MEMBER_MIB = 256
FIELDS = ["read_ios", "read_merges", "read_sectors", "read_ticks", "write_ios", "write_merges",
          "write_sectors", "write_ticks", "in_flight", "io_ticks", "time_in_queue", "discard_ios",
          "discard_merges", "discard_sectors", "discard_ticks", "flush_ios", "flush_ticks"]
KEPT = ["read_ios", "read_sectors", "write_ios", "write_merges", "write_sectors", "flush_ios"]

# The grid: level, members, chunk; threads; fsync every K writes.
ARRAYS = [("raid1", 2, None, None), ("raid5", 4, 64, "left-symmetric"), ("raid10", 4, 64, "n2")]
THREADS = [1, 8, 32]
EVERY = [1, 100]
BLOCK_BYTES = 16384


def writes_per_thread(threads, every):
    """Enough writes for a steady count of fsyncs, few enough for a TCG guest."""
    return every * 8 if every > 1 else max(25, 800 // threads)


def grid(runs, thread_counts=THREADS):
    cases = []
    for level, devices, chunk, layout in ARRAYS:
        for threads in thread_counts:
            for every in EVERY:
                for run in range(1, (1 if threads == 1 else runs) + 1):
                    cid = f"{level}-{devices}-t{threads}-k{every}-run{run}"
                    cases.append(dict(id=cid, level=level, devices=devices, chunk_kib=chunk, layout=layout,
                                      threads=threads, every=every, bytes=BLOCK_BYTES, run=run,
                                      writes_per_thread=writes_per_thread(threads, every), seed=1000 + run))
    return cases


JOB_PRELUDE = r'''#!/bin/sh
quiet() { md=$1; shift; n=0
  while [ $n -lt 1200 ]; do
    busy=0; for d in $md "$@"; do for x in $(cat /sys/block/$d/inflight); do [ $x != 0 ] && busy=1; done; done
    a=$(cat /sys/block/$md/md/stripe_cache_active 2>/dev/null || echo 0)
    [ $busy = 0 ] && [ "$a" = 0 ] && return 0; sleep 0.1; n=$((n+1)); done
  echo "FLUSHREC-WARN not-idle $md"; }
stat_all() { for d in "$@"; do echo "FLUSHREC-$1-STAT $d $(cat /sys/block/$d/stat)"; done; }
'''


def case_script(c):
    devs = [f"vd{chr(97 + i)}" for i in range(c["devices"])]
    opts = f"--level={c['level']} --raid-devices={c['devices']}"
    if c["chunk_kib"]:
        opts += f" --chunk={c['chunk_kib']}"
    if c["layout"]:
        opts += f" --layout={c['layout']}"
    cid, members = c["id"], " ".join(devs)
    gen = (f"fsyncgen -f /dev/md0 -t {c['threads']} -b {c['bytes']} -k {c['every']} "
           f"-n {c['writes_per_thread']} -r $((size - 2097152)) -S {c['seed']}")
    return "\n".join([
        f"echo FLUSHREC-BEGIN {cid}",
        f"mdadm --create /dev/md0 --run --assume-clean --metadata=1.2 --bitmap=none {opts} "
        + " ".join("/dev/" + d for d in devs) + f" >/dev/null 2>&1 || echo FLUSHREC-WARN create {cid}",
        "echo 0 > /sys/block/md0/md/safe_mode_delay",
        "size=$(blockdev --getsize64 /dev/md0)",
        "dd if=/dev/zero of=/dev/md0 bs=4096 count=1 seek=$((size / 4096 - 1)) oflag=direct 2>/dev/null",
        "sync", f"quiet md0 {members}", "sleep 0.5", f"quiet md0 {members}",
        f"for d in {members} md0; do echo \"FLUSHREC-S0 {cid} $d $(cat /sys/block/$d/stat)\"; done",
        f"{gen} | sed 's/^/FLUSHREC-LOAD {cid} /'",
        f"quiet md0 {members}", "sleep 0.5", f"quiet md0 {members}",
        f"for d in {members} md0; do echo \"FLUSHREC-S1 {cid} $d $(cat /sys/block/$d/stat)\"; done",
        "mdadm --stop /dev/md0 >/dev/null 2>&1 || echo FLUSHREC-WARN stop",
        f"mdadm --zero-superblock {' '.join('/dev/' + d for d in devs)} >/dev/null 2>&1",
        f"echo FLUSHREC-END {cid}", ""])


INIT = """#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in virtio_pci virtio_blk raid0 raid1 raid10 raid456; do modprobe $m; done
sleep 0.3
echo FLUSHREC-KERNEL $(uname -r) ncpu=$(grep -c ^processor /proc/cpuinfo) sched=$(cat /sys/block/vda/queue/scheduler | tr ' ' ',') wc=$(cat /sys/block/vda/queue/write_cache | tr ' ' '_')
sh /job.sh > /dev/console 2>&1
echo FLUSHREC-DONE
poweroff -f
"""


def build():
    subprocess.run(["bash", os.path.join(ORACLE, "build.sh")], check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, MDIO_WORK=WORK))
    binary = os.path.join(WORK, "fsyncgen")
    subprocess.run(["gcc", "-O2", "-Wall", "-static", "-pthread", "-o", binary, os.path.join(HERE, "fsyncgen.c")], check=True)
    return binary


def boot(cases, binary, smp, log_path):
    tmp = tempfile.mkdtemp(prefix="flushrec-")
    try:
        root = os.path.join(tmp, "root")
        os.makedirs(os.path.join(root, "bin"))
        shutil.copy(binary, os.path.join(root, "bin", "fsyncgen"))
        with open(os.path.join(root, "job.sh"), "w") as f:
            f.write(JOB_PRELUDE + "".join(case_script(c) for c in cases))
        with open(os.path.join(root, "init"), "w") as f:
            f.write(INIT)
        os.chmod(os.path.join(root, "init"), 0o755)
        extra = subprocess.run("find . | cpio -o -H newc --quiet", shell=True, cwd=root, capture_output=True, check=True).stdout
        initrd = os.path.join(tmp, "initrd")
        with open(initrd, "wb") as f:
            f.write(open(os.path.join(WORK, "initrd.base.cpio"), "rb").read() + extra)
        cmd = ["nice", "qemu-system-x86_64", "-accel", "tcg", "-smp", str(smp), "-m", "512", "-nographic",
               "-no-reboot", "-kernel", os.path.join(WORK, "vmlinuz"), "-initrd", initrd,
               "-append", "console=ttyS0 panic=-1 loglevel=3"]
        for i in range(max(c["devices"] for c in cases)):
            image = os.path.join(tmp, f"m{i}.img")
            with open(image, "wb") as f:
                f.truncate(MEMBER_MIB << 20)
            cmd += ["-drive", f"file={image},format=raw,if=virtio,cache=unsafe"]
        with open(log_path, "w") as log:
            subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=3600)
        return open(log_path, errors="replace").read()
    finally:
        shutil.rmtree(tmp)


def analyse(c, console, smp):
    cid = c["id"]
    before, after, load = {}, {}, {}
    for m in re.finditer(r"FLUSHREC-(S0|S1|LOAD) (\S+) (.*)", console):
        tag, who, rest = m.groups()
        if who != cid:
            continue
        if tag == "LOAD":
            load = {k: v for k, _, v in (kv.partition("=") for kv in rest.replace("FSYNCGEN", "").split())}
        else:
            dev, *numbers = rest.split()
            (before if tag == "S0" else after)[dev] = [int(x) for x in numbers]
    if not load or set(before) != set(after) or not before:
        return {"id": cid, "error": "incomplete record"}
    def delta(dev):
        d = {f: after[dev][i] - before[dev][i] for i, f in enumerate(FIELDS) if i < len(after[dev])}
        return {k: d[k] for k in KEPT}
    devs = [f"vd{chr(97 + i)}" for i in range(c["devices"])]
    members = [{"slot": i, "dev": d, **delta(d)} for i, d in enumerate(devs)]
    fsyncs = int(load["fsyncs"])
    kernel = re.search(r"FLUSHREC-KERNEL (\S+) ncpu=(\d+) sched=(\S+) wc=(\S+)", console)
    return {
        "id": cid, "level": c["level"], "devices": c["devices"], "chunk_kib": c["chunk_kib"], "layout": c["layout"],
        "run": c["run"],
        "load": {"threads": c["threads"], "fsync_every": c["every"], "bytes": c["bytes"], "pattern": "rand",
                 "writes_per_thread": c["writes_per_thread"], "seed": c["seed"],
                 "host_writes": int(load["writes"]), "host_fsyncs": fsyncs, "failures": int(load["failures"]),
                 "secs": float(load["secs"])},
        "members": members,
        "md0": delta("md0"),
        "derived": {
            "member_flushes_per_fsync": [round(m["flush_ios"] / fsyncs, 4) for m in members],
            "member_write_ios_per_host_write": [round(m["write_ios"] / int(load["writes"]), 4) for m in members],
        },
        "vm": {"kernel": kernel.group(1) if kernel else None, "smp": smp, "member_scheduler": kernel.group(3) if kernel else None,
               "member_write_cache": kernel.group(4) if kernel else None, "member_mib": MEMBER_MIB,
               "qemu": "tcg, virtio-blk, cache=unsafe, raw sparse images"},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--smp", type=int, default=1)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--skip-done", action="store_true")
    ap.add_argument("--threads", default="", help="thread counts instead of the grid's, e.g. 16")
    a = ap.parse_args()
    binary = build()
    out = os.path.abspath(a.out)
    results = {r["id"]: r for r in json.load(open(out))} if os.path.exists(out) else {}
    cases = grid(a.runs, [int(t) for t in a.threads.split(",")] if a.threads else THREADS)
    if a.only:
        cases = [c for c in cases if any(c["id"].startswith(p) for p in a.only.split(","))]
    if a.skip_done:
        cases = [c for c in cases if "error" in results.get(c["id"], {"error": 1})]
    logs = os.path.join(os.path.dirname(out), "logs")
    os.makedirs(logs, exist_ok=True)
    for start in range(0, len(cases), a.batch):
        batch = cases[start:start + a.batch]
        t0 = time.time()
        console = boot(batch, binary, a.smp, os.path.join(logs, f"{batch[0]['id']}.log"))
        for c in batch:
            results[c["id"]] = analyse(c, console, a.smp)
        with open(out + ".tmp", "w") as f:
            json.dump(sorted(results.values(), key=lambda r: r["id"]), f, indent=1)
        os.replace(out + ".tmp", out)
        ok = sum("error" not in results[c["id"]] for c in batch)
        print(f"boot {start // a.batch + 1}: {ok}/{len(batch)} ok in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()

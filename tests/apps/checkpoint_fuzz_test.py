#!/usr/bin/env python3
"""Seeded fuzzing of checkpoints through `strata eval`, `strata infer` and `strata train --resume`.

Trains two tiny models (GraphSAGE on the synthetic SBM graph, R-GCN on the synthetic
heterograph; 2 epochs each) and kills a third run (GraphSAGE) once it has written a resume
point (every 40 epochs: the model, the best epoch's, the optimizer state and the run's
progress). Then edits the checkpoints and the resume point and re-seals each edited file with
a valid XXH3-128 checksum (through libxxhash, which strata links), so the edits get past the
checksum to the header parser and to what eval, infer and resume do with the metadata: values
of another type in the header JSON (meta and tensor index: shapes, offsets, byte counts,
dtypes, names), deleted keys, repeated or dropped tensors, byte edits of the JSON text, of the
payload (weights become NaN, infinities, garbage) and of the length and version fields. One
case in ten keeps the old checksum. Every run must exit 0, or 1 with a `strata: error:` line
naming the checkpoint; never a crash, a signal or a sanitizer report. Python standard library
only (ctypes for libxxhash).

usage: checkpoint_fuzz_test.py STRATA CONFIG_DIR [CASES] [SEED]
"""
import ctypes
import ctypes.util
import json
import os
import random
import shutil
import struct
import signal
import subprocess
import sys
import tempfile
import time

import fuzz_verdict  # beside this file

PREFIX, ALIGN = 24, 64  # models/checkpoint.h: magic, version, reserved, header length; 64-byte aligned payload
JUNK_VALUES = [None, -1, 0, 1, 2**31, 2**63 - 1, 2**63, 2**64, -2**63, 1.5, 1e308, -0.0, '', 'x', 'f32', 'f64',
               'i64', 'model/x', 'optimizer/step', [], [0], [-1, 4], [2**40, 2**40], {}, {'a': 1}, True]
JUNK_BYTES = [b'"', b'{', b'}', b'[', b']', b',', b':', b'-', b'0', b'9' * 20, b'1e999', b'null', b'\\u0000', b'\x00',
              b'\xff']


class Xxh128(ctypes.Structure):
    _fields_ = [('lo', ctypes.c_uint64), ('hi', ctypes.c_uint64)]


def load_xxh3():
    name = ctypes.util.find_library('xxhash') or 'libxxhash.so.0'
    try:
        fn = ctypes.CDLL(name).XXH3_128bits_withSeed
    except (OSError, AttributeError):
        return None
    fn.restype, fn.argtypes = Xxh128, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    return fn


def split(blob):
    """(version, header JSON, payload bytes) of a checkpoint."""
    version, = struct.unpack_from('<I', blob, 8)
    n, = struct.unpack_from('<Q', blob, 16)
    start = (PREFIX + n + ALIGN - 1) // ALIGN * ALIGN
    return version, json.loads(blob[PREFIX:PREFIX + n]), blob[start:-16]


def join(version, header_bytes, payload, length=None):
    out = b'STRATACK' + struct.pack('<IIQ', version, 0, len(header_bytes) if length is None else length) + header_bytes
    return out + b'\0' * (-len(out) % ALIGN) + payload


def places(node, path=()):
    """Every (container, key) in a JSON value, depth first."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for k, v in items:
        yield node, k
        yield from places(v, path + (k,))


def byte_edit(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        p = rng.randint(0, len(data))
        if rng.randrange(2):
            data[p:p] = rng.choice(JUNK_BYTES)
        else:
            del data[p:p + rng.randint(1, 4)]
    return bytes(data)


def mutate(rng, blob):
    """An edited checkpoint (unsealed) and what was edited."""
    version, header, payload = split(blob)
    length = None
    op = rng.randrange(6)
    if op <= 1:  # a value of another type, or a deleted key, anywhere in the header
        spots = list(places(header if op == 0 else header['tensors']))
        node, key = rng.choice(spots)
        if isinstance(node, dict) and rng.randrange(3) == 0:
            del node[key]
            what = f'deleted {key!r}'
        else:
            node[key] = rng.choice(JUNK_VALUES)
            what = f'{key!r} = {node[key]!r}'
        text = json.dumps(header).encode()
    elif op == 2:  # a tensor repeated or dropped
        t = header['tensors']
        k = rng.randrange(len(t))
        if rng.randrange(2):
            t.insert(rng.randrange(len(t) + 1), dict(t[k]))
            what = f'tensor {t[k]["name"]} repeated'
        else:
            what = f'tensor {t.pop(k)["name"]} dropped'
        text = json.dumps(header).encode()
    elif op == 3:
        text, what = byte_edit(rng, json.dumps(header).encode()), 'header text'
    elif op == 4:
        text, what = json.dumps(header).encode(), 'payload'
        payload = bytearray(payload)
        for _ in range(rng.randint(1, 8)):
            p = rng.randrange(0, len(payload) - 4, 4)
            payload[p:p + 4] = rng.choice([struct.pack('<f', float('nan')), struct.pack('<f', float('inf')),
                                           struct.pack('<f', 3e38), b'\xff\xff\xff\xff', b'\0\0\0\x80'])
        payload = bytes(payload)
    else:
        text = json.dumps(header).encode()
        if rng.randrange(2):
            length = rng.choice([0, 1, len(text) - 1, len(text) + 1, len(text) + 64, 2**63, 2**64 - 1])
            what = f'header length {length}'
        else:
            version = rng.choice([0, 1, 2, 2**32 - 1])
            what = f'version {version}'
    return join(version, text, payload, length), what


def run(cmd, env):
    r = subprocess.run(cmd, env=env, capture_output=True, timeout=300)
    return r.returncode, r.stderr.decode('utf-8', 'replace')


def interrupted_run(strata, config, tmp, env):
    """(the train arguments, the folder of a killed run holding its resume point, a pristine copy
    of that folder), or an error text. A run that ends before it is killed (a starved poller on a
    loaded machine) is tried again, longer."""
    for epochs in (600, 2400, 9600):
        shutil.rmtree(os.path.join(tmp, 'resume'), ignore_errors=True)
        args = ['--set', 'training.runs=1', '--set', f'training.epochs={epochs}', '--set', 'training.patience=0',
                '--set', 'output.resume_every=40', '--set', f'output.run_dir={os.path.join(tmp, "resume", "run")}']
        p = subprocess.Popen([strata, 'train', config] + args, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        partial = os.path.join(tmp, 'resume', f'run.partial-{p.pid}')
        deadline = time.time() + 120
        while p.poll() is None and time.time() < deadline and not os.path.exists(os.path.join(partial, 'resume.ckpt')):
            time.sleep(0.005)  # the first is written after epoch 40
        if p.poll() is not None:
            continue
        p.send_signal(signal.SIGKILL)
        p.wait()
        keep = os.path.join(tmp, 'resume-pristine')
        shutil.copytree(partial, keep)
        return (args, partial, keep), None
    return None, f'the run ended (exit {p.returncode}) before it could be killed after its first resume point'


def main():
    strata, configs = sys.argv[1], sys.argv[2]
    cases = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    xxh3 = load_xxh3()
    if xxh3 is None:
        print('SKIP: libxxhash (XXH3_128bits_withSeed) cannot be loaded')
        return 77
    failures, codes = 0, {}
    with tempfile.TemporaryDirectory(prefix='strata-checkpoint-fuzz-') as tmp:
        env = dict(os.environ, STRATA_CACHE_DIR=os.path.join(tmp, 'cache'), STRATA_MEMORY_LIMIT='2G',
                   OMP_NUM_THREADS='2')
        models = []
        for name in ('graphsage_sbm', 'rgcn_synthetic'):
            config = os.path.join(configs, f'{name}.yaml')
            run_dir = os.path.join(tmp, name)
            code, err = run([strata, 'train', config, '--set', 'training.epochs=2', '--set', 'training.runs=1',
                             '--set', f'output.run_dir={run_dir}'], env)
            if code != 0:
                print(f'FAIL: training {name} for the seed checkpoint: exit {code}\n{err}')
                return 1
            with open(os.path.join(run_dir, 'checkpoints', 'run-01.ckpt'), 'rb') as f:
                models.append((name, config, f.read()))
        sage = models[0][1]
        resume, error = interrupted_run(strata, sage, tmp, env)
        if error:
            print(f'FAIL: {error}')
            return 1
        args, partial, pristine = resume
        code, err = run([strata, 'train', sage] + args + ['--resume'], env)  # unedited, it resumes
        if code != 0:
            print(f'FAIL: the unedited resume point does not resume: exit {code}\n{err}')
            return 1
        shutil.rmtree(os.path.join(tmp, 'resume'))
        shutil.copytree(pristine, partial)
        with open(os.path.join(pristine, 'resume.ckpt'), 'rb') as f:
            models.append(('resume', sage, f.read()))
        for n in range(cases):
            name, config, blob = models[n % len(models)]
            body, what = mutate(rng, blob[:-16])
            sealed = rng.randrange(10) != 0
            h = xxh3(body, len(body), 0) if sealed else None
            tail = struct.pack('<QQ', h.lo, h.hi) if sealed else blob[-16:]
            if name == 'resume':  # the killed run's folder again, with the edited resume point
                shutil.rmtree(os.path.join(tmp, 'resume'))
                shutil.copytree(pristine, partial)
                path, command = os.path.join(partial, 'resume.ckpt'), 'train --resume'
                cmd = [strata, 'train', config] + args + ['--resume']
            else:
                path = os.path.join(tmp, f'case{n}.ckpt')
                command = 'eval' if (n // len(models)) % 2 == 0 else 'infer'
                cmd = [strata, command, config, '--checkpoint', path]
                if command == 'infer':
                    cmd += ['--out', os.path.join(tmp, f'case{n}.csv')]
            with open(path, 'wb') as f:
                f.write(body + tail)
            code, err = run(cmd, env)
            codes[code] = codes.get(code, 0) + 1
            # A resumed session renames the killed run's folder after its own process id.
            names = os.path.join(tmp, 'resume', 'run.partial-') if name == 'resume' else path
            problem = fuzz_verdict.problem(code, err, False, names, 'the checkpoint')
            if problem and name == 'resume' and code == 1 and 'strata: error: training diverged: ' in err:
                problem = None  # finite but huge weights (3e38) resumed: the loss overflows, an error of its own
            if problem:
                failures += 1
                keep = os.path.join(os.environ.get('TMPDIR', '/tmp'), f'strata-checkpoint-fuzz-case{n}.ckpt')
                with open(keep, 'wb') as f:  # a resumed run may have moved or rewritten `path`
                    f.write(body + tail)
                print(f'FAIL case {n} (strata {command} {os.path.basename(config)}, edited {what}, '
                      f'{"re-sealed" if sealed else "old checksum"}; kept as {keep}): {problem}\n'
                      f'--- stderr ---\n{err[-2000:]}')
            if os.path.exists(path):
                os.remove(path)
    return fuzz_verdict.tally(cases, codes, failures, 'edited checkpoints', 'accepted and refused checkpoints')


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""End-to-end checks of scripts/planetoid_convert.py: Planetoid pickles written here opcode by
opcode, as Python 2 wrote the published files (protocol 2; numpy arrays through
numpy.core.multiarray._reconstruct and a raw byte string; a scipy csr_matrix through NEWOBJ
and its __dict__; the graph as a defaultdict of lists), converted, compared field by field,
and loaded by `strata info`; then bad input: a pickle that names os.system (refused, never
run), a truncated pickle, a bad test.index line, values of the wrong type or shape, missing files
and an existing output folder, each refused naming the file and leaving nothing behind; 150
seeded byte edits, each converted or refused with one error line, never a traceback. When the data root holds the real
Cora files (citation/planetoid/ind.cora.*), they are converted and counted too, and the shipped
GCN and GAT configs trained on the public split must reach their goals (0.80, 0.81; 2 runs).
Python standard library only.

usage: planetoid_convert_test.py STRATA CONVERTER [DATA_ROOT]
"""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

PROTO, STOP, MARK, TUPLE, TUPLE1, TUPLE2, TUPLE3 = b'\x80\x02', b'.', b'(', b't', b'\x85', b'\x86', b'\x87'
REDUCE, BUILD, NEWOBJ, EMPTY_TUPLE, EMPTY_DICT, EMPTY_LIST = b'R', b'b', b'\x81', b')', b'}', b']'
SETITEMS, APPENDS, NONE, NEWFALSE = b'u', b'e', b'N', b'\x89'

failures = 0


def check(name, ok, detail=''):
    global failures
    if not ok:
        failures += 1
        print(f'FAIL {name}: {detail}')


def glob(module, name):
    return b'c' + module.encode() + b'\n' + name.encode() + b'\n'


def string(data):  # a Python 2 str: SHORT_BINSTRING or BINSTRING
    data = data.encode('latin1') if isinstance(data, str) else data
    return (b'U' + bytes([len(data)]) if len(data) < 256 else b'T' + struct.pack('<i', len(data))) + data


def integer(v):
    return b'J' + struct.pack('<i', v)


def ints(values, close=TUPLE):
    return MARK + b''.join(integer(v) for v in values) + close


def ndarray(code, shape, values):
    """numpy's pickle of a C-order array of dtype `code` ('i4', 'f4', 'f8', 'i8')."""
    raw = struct.pack(f'<{len(values)}{ {"i4": "i", "f4": "f", "f8": "d", "i8": "q"}[code]}', *values)
    dtype = glob('numpy', 'dtype') + string(code) + integer(0) + integer(1) + TUPLE3 + REDUCE + \
        MARK + integer(3) + string('<') + NONE + NONE + NONE + integer(-1) + integer(-1) + integer(0) + TUPLE + BUILD
    return glob('numpy.core.multiarray', '_reconstruct') + glob('numpy', 'ndarray') + integer(0) + TUPLE1 + \
        string('b') + TUPLE3 + REDUCE + MARK + integer(1) + ints(shape) + dtype + NEWFALSE + string(raw) + TUPLE + BUILD


def csr(rows, cols):
    """scipy's pickle of a csr_matrix with float32 data; `rows` is a list of {column: value}."""
    indptr, indices, data = [0], [], []
    for r in rows:
        for c in sorted(r):
            indices.append(c)
            data.append(r[c])
        indptr.append(len(indices))
    return csr_parts(len(rows), cols, ndarray('i4', [len(indptr)], indptr), ndarray('i4', [len(indices)], indices),
                     ndarray('f4', [len(data)], data))


def csr_parts(rows, cols, indptr, indices, data=None):
    """A csr_matrix pickle from pickled parts (bad ones too, for the refusals); `rows` an int or pickled bytes."""
    rows = rows if isinstance(rows, bytes) else integer(rows)
    data = ndarray('f4', [0], []) if data is None else data
    items = string('format') + string('csr') + string('_shape') + rows + integer(cols) + TUPLE2 + \
        string('indptr') + indptr + string('indices') + indices + string('maxprint') + integer(50) + \
        string('data') + data
    return PROTO + glob('scipy.sparse.csr', 'csr_matrix') + EMPTY_TUPLE + NEWOBJ + EMPTY_DICT + MARK + items + \
        SETITEMS + BUILD + STOP


def onehot(labels, classes):
    values = [1 if c == y else 0 for y in labels for c in range(classes)]
    return PROTO + ndarray('i4', [len(labels), classes], values) + STOP


def graph(adjacency):
    body = b''.join(integer(k) + EMPTY_LIST + ints(v, APPENDS) for k, v in adjacency.items())
    return PROTO + glob('collections', 'defaultdict') + glob('__builtin__', 'list') + TUPLE1 + REDUCE + MARK + body + \
        SETITEMS + STOP


def write_planetoid(folder, name, files):
    os.makedirs(folder, exist_ok=True)
    for suffix, blob in files.items():
        with open(os.path.join(folder, f'ind.{name}.{suffix}'), 'wb') as f:
            f.write(blob)


def run(*args, env=None):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=120, env=env)
    return p.returncode, p.stdout, p.stderr


def tiny_files(classes=3, dim=4):
    """A Planetoid dataset of 510 + 3 nodes: 6 training, 500 validation, then allx's other 4
    rows; test indices 512, 510 (out of order, as in the real files) and a gap at 511."""
    n_all = 510
    allx = [{(v % dim): 1.0, ((v + 1) % dim): 0.5} if v % 7 else {} for v in range(n_all)]
    ally = [v % classes for v in range(n_all)]
    files = {
        'x': csr(allx[:6], dim), 'y': onehot(ally[:6], classes),
        'allx': csr(allx, dim), 'ally': onehot(ally, classes),
        'tx': csr([{0: 0.25}, {3: 2.0}], dim), 'ty': onehot([2, 1], classes),
        'test.index': b'512\n510\n',
        # Node 0 lists itself and node 1 twice: the self-loop and the repeat are dropped.
        'graph': graph({0: [0, 1, 1, 512], 1: [0], 2: [510], 510: [2], 512: [0], 3: []}),
    }
    return files, allx, ally


def main(argv):
    strata, converter = argv[1], argv[2]
    data_root = argv[3] if len(argv) > 3 else ''
    tmp = tempfile.mkdtemp(prefix='strata-planetoid-')
    env = dict(os.environ, STRATA_CACHE_DIR=os.path.join(tmp, 'cache'))

    files, allx, ally = tiny_files()
    raw = os.path.join(tmp, 'raw')
    write_planetoid(raw, 'tiny', files)
    out = os.path.join(tmp, 'out')
    rc, stdout, err = run(sys.executable, converter, raw, 'tiny', out)
    check('convert', rc == 0, f'exit {rc}: {err}')
    check('convert-summary', '513 nodes, 6 edges' in stdout and '6 train / 500 val / 2 test' in stdout and
          '1 nodes between the test indices' in stdout, stdout)
    if rc == 0:
        with open(os.path.join(out, 'edges.csv')) as f:
            edges = f.read()
            check('edges', edges == 'src_id,dst_id\n0,1\n0,512\n1,0\n2,510\n510,2\n512,0\n', edges)
        with open(os.path.join(out, 'nodes.csv')) as f:
            lines = f.read().split('\n')
        check('nodes-header', lines[0] == 'node_id,label,train_mask,val_mask,test_mask,feat', lines[0])
        check('nodes-count', len(lines) == 1 + 513 + 1 and lines[-1] == '', f'{len(lines)} lines')
        check('node-0', lines[1] == '0,0,1,0,0,"0,0,0,0"', lines[1])  # v % 7 == 0: an empty feature row
        check('node-1', lines[2] == '1,1,1,0,0,"0,1,0.5,0"', lines[2])
        check('node-val', lines[1 + 6].startswith('6,0,0,1,0,') and lines[1 + 505].startswith('505,') and
              ',0,1,0,' in lines[1 + 505], lines[1 + 6] + ' / ' + lines[1 + 505])
        check('node-unsplit', lines[1 + 509] == '509,2,0,0,0,"0,1,0.5,0"', lines[1 + 509])
        # tx's first row belongs to node 512, its second to node 510; node 511 has no row.
        check('node-test', lines[1 + 510] == '510,1,0,0,1,"0,0,0,2"' and lines[1 + 512] == '512,2,0,0,1,"0.25,0,0,0"',
              lines[1 + 510] + ' / ' + lines[1 + 512])
        check('node-gap', lines[1 + 511] == '511,-1,0,0,0,"0,0,0,0"', lines[1 + 511])
        rc, stdout, err = run(strata, 'info', f'dglcsv:{out}', env=env)
        check('strata-info', rc == 0, err)
        text = ' '.join((stdout + err).split())  # runs of spaces as one
        for want in ('nodes 513', 'edges 6', 'features 4 dims', 'classes 3, 512 of 513 nodes labelled',
                     'splits train 6, val 500, test 2 (train_mask/val_mask/test_mask columns of nodes.csv)'):
            check('strata-info', want in text, f'{want!r} not in:\n{stdout}')

    # An existing output folder is refused; nothing is written over it.
    rc, _, err = run(sys.executable, converter, raw, 'tiny', out)
    check('out-exists', rc == 1 and f"'{out}': already exists" in err, err)

    # An output folder that cannot be made (its parent is missing) is refused by name.
    nowhere = os.path.join(tmp, 'no-such-parent', 'out')
    rc, _, err = run(sys.executable, converter, raw, 'tiny', nowhere)
    check('out-unwritable', rc == 1 and f"'{nowhere}': cannot write it (No such file or directory)" in err, err)

    def refused(name, edit, expect):
        bad = os.path.join(tmp, name)
        write_planetoid(bad, 'tiny', dict(files, **edit))
        target = os.path.join(tmp, name + '-out')
        rc, _, err = run(sys.executable, converter, bad, 'tiny', target)
        check(name, rc == 1 and err.startswith('planetoid_convert: error: ') and expect in err,
              f'exit {rc}: {err.strip()} (expected {expect!r})')
        left = [e for e in os.listdir(tmp) if e.startswith(name + '-out')]
        check(name + '-nothing-left', not left, f'left {left}')

    marker = os.path.join(tmp, 'executed')
    evil = PROTO + glob('os', 'system') + string(f'touch {marker}') + TUPLE1 + REDUCE + STOP
    refused('evil', {'graph': evil}, "ind.tiny.graph': not a Planetoid pickle: names 'os.system'")
    check('evil-not-run', not os.path.exists(marker), 'the pickle ran os.system')
    refused('truncated', {'allx': files['allx'][:len(files['allx']) // 2]}, "ind.tiny.allx': not a Planetoid pickle")
    refused('test-index', {'test.index': b'514\nfive\n'}, "ind.tiny.test.index', line 2: expected a node index")
    refused('not-one-hot', {'ty': PROTO + ndarray('i4', [2, 3], [1, 1, 0, 0, 1, 0]) + STOP},
            "ind.tiny.ty': row 0 is not one-hot")
    refused('short-array', {'y': PROTO + ndarray('i4', [6, 3], [1] * 17) + STOP}, 'holds 68 bytes, expected 72')
    refused('test-start', {'test.index': b'600\n601\n'}, 'the test nodes start at 600, expected 510')
    refused('bad-node', {'graph': graph({0: [9999]})}, "node 9999 is outside the 513 nodes")
    refused('x-not-allx', {'y': onehot([1, 1, 2, 0, 1, 2], 3)}, 'ind.tiny.x and ind.tiny.y are not the first rows')
    refused('nan-feature', {'tx': csr([{0: float('nan')}, {}], 4)}, "ind.tiny.tx': holds NaN or infinite")
    refused('float-indptr', {'x': csr_parts(1, 4, ndarray('f4', [2], [0, 1]), ndarray('i4', [1], [0]))},
            "ind.tiny.x': expected a scipy CSR matrix with a shape, integer indptr")
    refused('string-shape', {'allx': csr_parts(string('a'), 4, ndarray('i4', [2], [0, 0]), ndarray('i4', [0], []))},
            "ind.tiny.allx': expected a scipy CSR matrix")
    refused('3d-labels', {'ally': PROTO + ndarray('i4', [1, 1, 3], [1, 0, 0]) + STOP},
            "ind.tiny.ally': not a Planetoid pickle: ndarray of shape (1, 1, 3)")
    os.remove(os.path.join(tmp, 'bad-node', 'ind.tiny.ty'))
    rc, _, err = run(sys.executable, converter, os.path.join(tmp, 'bad-node'), 'tiny', os.path.join(tmp, 'o2'))
    check('missing', rc == 1 and 'missing ind.tiny.ty' in err, err)

    # Seeded byte edits of every file (dropped, inserted and overwritten bytes): each conversion
    # succeeds or exits 1 with one error line; never a Python traceback.
    rng = random.Random(1)
    codes = {}
    for case in range(150):
        k = rng.choice(sorted(files))
        data = bytearray(files[k])
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(data) + 1)
            op = rng.randrange(3)
            if op == 0:
                del data[at:at + rng.randint(1, 4)]
            elif op == 1:
                data[at:at] = bytes([rng.randrange(256)])
            elif at < len(data):
                data[at] = rng.randrange(256)
        edited = os.path.join(tmp, 'fuzz')
        write_planetoid(edited, 'tiny', dict(files, **{k: bytes(data)}))
        target = os.path.join(tmp, f'fuzz-out-{case}')
        rc, _, err = run(sys.executable, converter, edited, 'tiny', target)
        codes[rc] = codes.get(rc, 0) + 1
        check(f'fuzz-{case}-{k}', rc in (0, 1) and 'Traceback' not in err and
              (rc == 0 or (err.startswith('planetoid_convert: error: ') and err.count('\n') == 1)),
              f'exit {rc}: {err[-400:]}')
    print(f'150 edited pickles: exit codes {dict(sorted(codes.items()))}')
    check('fuzz-reach', codes.get(1, 0) >= 50, 'the edits no longer reach the error paths')

    # The real Cora files, where the data root has them: converted, counted, and the shipped GCN
    # and GAT configs trained on the public split (2 runs; the full 10 give 0.830 and 0.828).
    cora = os.path.join(data_root, 'citation', 'planetoid') if data_root else ''
    if cora and os.path.isfile(os.path.join(cora, 'ind.cora.x')):
        folder = os.path.join(tmp, 'cora')
        rc, stdout, err = run(sys.executable, converter, cora, 'cora', folder)
        check('cora', rc == 0 and '2708 nodes, 10556 edges' in stdout and '1433 features, 7 classes' in stdout and
              '140 train / 500 val / 1000 test' in stdout, stdout + err)
        configs = os.path.join(os.path.dirname(converter), '..', 'configs')
        for config, goal in (('gcn_cora', 0.80), ('gat_cora', 0.81)):
            run_dir = os.path.join(tmp, 'run-' + config)
            rc, _, err = run(strata, 'train', os.path.join(configs, config + '.yaml'), '--set',
                             f'data.dataset=dglcsv:{folder}', '--set', 'training.runs=2', '--set',
                             f'output.run_dir={run_dir}', env=env)
            summary = json.load(open(os.path.join(run_dir, 'summary.json'))) if rc == 0 else {}
            acc = summary.get('test_acc', {}).get('mean', 0)
            check(config, rc == 0 and summary['dataset']['split']['train'] == 140 and acc >= goal,
                  f'exit {rc}, test accuracy {acc:.4f} on the public split (goal {goal}): {err[-300:]}')
            print(f'{config} on the public split, 2 runs: test accuracy {acc:.4f} (goal {goal})')
    else:
        print(f"SKIP part: no Planetoid Cora files under '{cora or '(no data root given)'}' (ind.cora.x ...)")

    print(f'{failures} failures')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

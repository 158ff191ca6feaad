#!/usr/bin/env python3
"""Seeded fuzzing of the text loaders through `strata info --graph FORMAT:PATH --no-cache`.

Small valid files (Matrix Market general and symmetric, an edge list, an edge CSV, a DGL
CSVDataset folder) get random byte edits: junk tokens (huge and negative ids, non-finite
numbers, quotes, NUL, a second header), deletions, truncation, repeated lines. Every load must
succeed (exit 0) or be refused with exit 1 and a `strata: error:` line naming the file it
read; never a crash, a signal or a sanitizer report. Python standard library only.

usage: loader_fuzz_test.py STRATA [CASES] [SEED]
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

import fuzz_verdict  # beside this file

SEEDS = {
    'general.mtx': b'%%MatrixMarket matrix coordinate real general\n% a comment\n5 5 6\n1 2 1.5\n2 3 2\n3 1 -1\n'
                   b'4 5 0.5\n5 4 1\n5 5 3\n',
    'symmetric.mtx': b'%%MatrixMarket matrix coordinate pattern symmetric\n4 4 3\n2 1\n3 2\n4 1\n',
    'edges.txt': b'# comment\n0 1\n1 2\n2 0\n3 4\n4 5\n5 3\n',
    'edges.csv': b'id_1,id_2\n0,1\n1,2\n2,3\n3,0\n',
    'dgl/meta.yaml': b'dataset_name: toy\nedge_data:\n- file_name: edges.csv\nnode_data:\n- file_name: nodes.csv\n',
    'dgl/nodes.csv': b'node_id,label,feat,train_mask,val_mask,test_mask\n0,0,"0.1, 0.2",1,0,0\n1,1,"0.3, 0.4",0,1,0\n'
                     b'2,0,"0.5, 0.6",0,0,1\n3,1,"0.7, 0.8",1,0,0\n',
    'dgl/edges.csv': b'src_id,dst_id\n0,1\n1,2\n2,3\n3,0\n',
}
# (format prefix, what --graph names, the files a mutation may edit)
CASES = [('mtx', 'general.mtx', ['general.mtx']), ('mtx', 'symmetric.mtx', ['symmetric.mtx']),
         ('edgelist', 'edges.txt', ['edges.txt']), ('csv', 'edges.csv', ['edges.csv']),
         ('dglcsv', 'dgl', ['dgl/meta.yaml', 'dgl/nodes.csv', 'dgl/edges.csv'])]
JUNK = [b' ', b'\t', b',', b'"', b'-', b'-1', b'0', b'99999999999', b'1e999', b'nan', b'\n', b'%', b'#', b'\x00',
        b'\xff\xfe', b'2147483648', b'9223372036854775808', b'a', b'1.5', b'\r\n', b'%%MatrixMarket']


def mutate(rng, data):
    for _ in range(rng.randint(1, 4)):
        op, p = rng.randrange(4), rng.randint(0, len(data))
        if op == 0:
            data[p:p] = rng.choice(JUNK)
        elif op == 1 and data:
            del data[p:p + rng.randint(1, 5)]
        elif op == 2:
            data = data[:p]
        else:
            lines = data.split(b'\n')
            lines.insert(rng.randrange(len(lines)), lines[rng.randrange(len(lines))])
            data = bytearray(b'\n'.join(lines))
    return data


def main():
    strata = sys.argv[1]
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    failures, codes = 0, {}
    with tempfile.TemporaryDirectory(prefix='strata-loader-fuzz-') as tmp:
        env = dict(os.environ, STRATA_CACHE_DIR=os.path.join(tmp, 'cache'), STRATA_MEMORY_LIMIT='2G')
        for n in range(cases):
            work = os.path.join(tmp, f'case{n}')
            for rel, content in SEEDS.items():
                os.makedirs(os.path.dirname(os.path.join(work, rel)), exist_ok=True)
                with open(os.path.join(work, rel), 'wb') as f:
                    f.write(content)
            fmt, name, editable = rng.choice(CASES)
            edited = os.path.join(work, rng.choice(editable))
            with open(edited, 'rb') as f:
                data = mutate(rng, bytearray(f.read()))
            with open(edited, 'wb') as f:
                f.write(data)
            target = os.path.join(work, name)
            r = subprocess.run([strata, 'info', '--graph', f'{fmt}:{target}', '--no-cache'], env=env,
                               capture_output=True, timeout=120)
            err = r.stderr.decode('utf-8', 'replace')
            codes[r.returncode] = codes.get(r.returncode, 0) + 1
            problem = fuzz_verdict.problem(r.returncode, err, False, target, 'the file')
            if problem:
                failures += 1
                print(f'FAIL case {n} ({fmt}:{name}, edited {os.path.relpath(edited, work)}): {problem}\n'
                      f'--- edited file ---\n{bytes(data)!r}\n--- stderr ---\n{err[:2000]}')
            shutil.rmtree(work)
    return fuzz_verdict.tally(cases, codes, failures, 'mutated graph files', 'loaded and refused files')


if __name__ == '__main__':
    sys.exit(main())

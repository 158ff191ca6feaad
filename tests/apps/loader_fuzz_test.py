#!/usr/bin/env python3
"""Seeded fuzzing of every file loader through `strata info --graph FORMAT:PATH --no-cache`.

Small valid datasets in each layout Strata reads (Matrix Market general and symmetric, an edge
list, an edge CSV, a DGL CSVDataset folder, LINQS as a folder and a .tgz, Pubmed .tab files,
a MUSAE folder with JSON features, HGB as a folder and a .zip, an RDF folder with gzipped
N-Triples, OGB's homogeneous and heterogeneous raw layouts with gzipped CSV) get random byte
edits in one of their files: junk tokens (huge and negative ids, non-finite numbers, quotes,
NUL, a second header), deletions, truncation, repeated lines. Edits go into the text before it
is compressed or archived, so they reach the parsers, except in one case in eight, where the
compressed or archived bytes themselves are edited. Every load must succeed (exit 0) or be
refused with exit 1 and a `strata: error:` line naming the dataset's path; never a crash, a
signal or a sanitizer report. Python standard library only.

usage: loader_fuzz_test.py STRATA [CASES] [SEED]
"""
import gzip
import io
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

import fuzz_verdict  # beside this file

DGL = {
    'meta.yaml': b'dataset_name: toy\nedge_data:\n- file_name: edges.csv\nnode_data:\n- file_name: nodes.csv\n',
    'nodes.csv': b'node_id,label,feat,train_mask,val_mask,test_mask\n0,0,"0.1, 0.2",1,0,0\n1,1,"0.3, 0.4",0,1,0\n'
                 b'2,0,"0.5, 0.6",0,0,1\n3,1,"0.7, 0.8",1,0,0\n',
    'edges.csv': b'src_id,dst_id\n0,1\n1,2\n2,3\n3,0\n',
}
LINQS = {
    'toy/toy.content': b'p1\t0\t1\t0\tA\np2\t1\t1\t0\tB\np3\t0\t0\t1\tA\n',
    'toy/toy.cites': b'p1\tp2\np1\tp3\np3\tp9\n',
}
PUBMED = {
    'Pubmed-Diabetes.DIRECTED.cites.tab': b'DIRECTED\tcites\nNO_FEATURES\n1\tpaper:10\t|\tpaper:20\n'
                                          b'2\tpaper:30\t|\tpaper:10\n3\tpaper:10\t|\tpaper:40\n',
    'Pubmed-Diabetes.NODE.paper.tab': b'NODE\tpaper\ncat=1,2,3:label\tnumeric:w-rat:0.0\tnumeric:w-insulin:0.0\t'
                                      b'numeric:w-cell:0.0\tstring:summary\n20\tlabel=2\tw-cell=0.25\tw-rat=0.5\t'
                                      b'summary=w-cell,w-rat\n10\tlabel=1\tw-insulin=0.125\tsummary=w-insulin\n'
                                      b'30\tlabel=3\tsummary=\n',
}
MUSAE = {
    'm_edges.csv': b'id_1,id_2\n0,1\n1,2\n2,0\n',
    'm_target.csv': b'id,page_name,page_type\n2,"Zed, Inc.",company\n0,"A ""quoted"" name",tvshow\n1,B,company\n',
    'm_features.json': b'{"0": [3, 1, 3], "2": [0], "1": []}',
}
HGB = {
    'toy/node.dat': b'0\tann\t0\t1,0,0,2\n2\tbob\t0\t0,0,0.5,0\n1\tvenue x\t1\n3\tcid\t0\t0,1,0,0\n',
    'toy/link.dat': b'0\t1\t0\t1.0\r\n2\t1\t0\t1.0\r\n1\t0\t1\t1.0\r\n1\t2\t1\t1.0\r\n3\t1\t0\t1.0\r\n1\t3\t1\t1.0\r\n',
    'toy/info.dat': b'{"node.dat": {"node type": {"0": "author", "1": "venue"}},\n'
                    b' "link.dat": {"link type": {"0": {"start": 0, "end": 1, "meaning": "author-venue"},\n'
                    b'                            "1": {"start": 1, "end": 0, "meaning": "venue-author"}}},\n'
                    b' "label.dat": {"node type": {"0": {"0": "x", "1": "y", "2": "z"}}}}\n',
    'toy/label.dat': b'0\tann\t0\t2\n2\tbob\t0\t0\n',
    'toy/label.dat.test_full': b'3\tcid\t0\t1\n',
}
RDF = {
    'toy_stripped.nt.gz': b'<http://x/alice> <http://x/knows> <http://x/bob> .\n'
                          b'<http://x/bob> <http://x/knows> <http://x/carol> .\n'
                          b'<http://x/alice> <http://x/name> "Alice"@en .\n'
                          b'<http://x/carol> <http://x/age> "41"^^<http://www.w3.org/2001/XMLSchema#int> .\n'
                          b'_:n1 <http://x/knows> <http://x/alice> .\n',
    'trainingSet.tsv': b'person\tid\tlabel_toy\r\nhttp://x/alice\t1.0\tg1\r\nhttp://x/bob\t2.0\tg2\r\n',
    'testSet.tsv': b'id\tperson\tlabel_toy\r\n3\thttp://x/carol\tg1\r\n',
}
OGB = {
    'raw/edge.csv.gz': b'0,1\n1,2\n2,3\n3,0\n0,2\n',
    'raw/num-node-list.csv.gz': b'4\n',
    'raw/num-edge-list.csv.gz': b'5\n',
    'raw/node-feat.csv.gz': b'0.5,1.0,-2\n1,0,0\n0,0,1e-3\n2.5,3,4\n',
    'raw/edge-feat.csv.gz': b'1\n2\n3\n4\n5\n',
    'raw/node-label.csv.gz': b'2\n0\nnan\n1\n',
    'split/time/train.csv.gz': b'0\n1\n',
    'split/time/valid.csv.gz': b'2\n',
    'split/time/test.csv.gz': b'3\n',
    'mapping/nodeidx2paperid.csv.gz': b'node idx,paper id\n0,a\n1,b\n2,c\n3,d\n',
}
OGB_HETERO = {
    'raw/num-node-dict.csv.gz': b'author,paper\n3,4\n',
    'raw/triplet-type-list.csv.gz': b'author,writes,paper\npaper,cites,paper\n',
    'raw/relations/author___writes___paper/edge.csv.gz': b'0,0\n1,0\n2,3\n',
    'raw/relations/author___writes___paper/num-edge-list.csv.gz': b'3\n',
    'raw/relations/paper___cites___paper/edge.csv.gz': b'0,1\n1,2\n',
    'raw/relations/paper___cites___paper/num-edge-list.csv.gz': b'2\n',
    'raw/node-feat/paper/node-feat.csv.gz': b'1,0\n0,1\n1,1\n0,0\n',
    'raw/node-label/paper/node-label.csv.gz': b'0\n2\n1\n0\n',
    'split/time/paper/train.csv.gz': b'0\n1\n',
    'split/time/paper/valid.csv.gz': b'2\n',
    'split/time/paper/test.csv.gz': b'3\n',
}
# (format prefix, the dataset's files, what --graph names: '' for the case's folder, a file or
# folder in it, or toy.tgz / toy.zip for one archive of all the files as LINQS and HGB ship them).
# Files named *.gz are gzipped, in an archive too.
KINDS = [
    ('mtx', {'general.mtx': b'%%MatrixMarket matrix coordinate real general\n% a comment\n5 5 6\n1 2 1.5\n2 3 2\n'
                            b'3 1 -1\n4 5 0.5\n5 4 1\n5 5 3\n'}, 'general.mtx'),
    ('mtx', {'symmetric.mtx': b'%%MatrixMarket matrix coordinate pattern symmetric\n4 4 3\n2 1\n3 2\n4 1\n'},
     'symmetric.mtx'),
    ('edgelist', {'edges.txt': b'# comment\n0 1\n1 2\n2 0\n3 4\n4 5\n5 3\n'}, 'edges.txt'),
    ('edgelist', {'edges.txt.gz': b'0 1\n1 2\n2 0\n'}, 'edges.txt.gz'),
    ('csv', {'edges.csv': b'id_1,id_2\n0,1\n1,2\n2,3\n3,0\n'}, 'edges.csv'),
    ('dglcsv', DGL, ''),
    ('linqs', LINQS, 'toy'),
    ('linqs', LINQS, 'toy.tgz'),
    ('pubmed', PUBMED, ''),
    ('musae', MUSAE, ''),
    ('hgb', HGB, 'toy'),
    ('hgb', HGB, 'toy.zip'),
    ('rdf', RDF, ''),
    ('ogb', OGB, ''),
    ('ogb', OGB_HETERO, ''),
]
JUNK = [b' ', b'\t', b',', b'"', b'-', b'-1', b'0', b'99999999999', b'1e999', b'nan', b'\n', b'%', b'#', b'\x00',
        b'\xff\xfe', b'2147483648', b'9223372036854775808', b'a', b'1.5', b'\r\n', b'%%MatrixMarket', b'{', b']',
        b'<', b'>', b'\\u', b'_:', b'.', b'|', b'paper:', b'label=', b'=']


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
    return bytes(data)


def gzipped(data):
    return gzip.compress(data, mtime=0)  # reproducible bytes for a seed


def packed(files, container):
    """The archive of `files` (name -> bytes on disk), as LINQS (.tgz) and HGB (.zip) ship."""
    out = io.BytesIO()
    if container == 'tgz':
        with tarfile.open(fileobj=out, mode='w:gz') as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    else:
        with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
            for name, data in files.items():
                z.writestr(name, data)
    return out.getvalue()


def write_case(rng, work, seeds, named):
    """Writes one dataset under `work`, mutated unless `rng` is None; returns (the path
    --graph names, what was edited)."""
    files, edited, raw_edit = dict(seeds), None, False
    if rng:
        edited = rng.choice(sorted(files))
        raw_edit = rng.randrange(8) == 0  # edit the compressed or archived bytes instead of the text
        if not raw_edit:
            files[edited] = mutate(rng, bytearray(files[edited]))
    on_disk = {name: gzipped(data) if name.endswith('.gz') else data for name, data in files.items()}
    container = os.path.splitext(named)[1][1:]
    if container in ('tgz', 'zip'):
        blob = packed(on_disk, container)
        if raw_edit:
            blob, edited = mutate(rng, bytearray(blob)), f'the {container} bytes'
        on_disk = {named: blob}
    elif raw_edit:
        on_disk[edited] = mutate(rng, bytearray(on_disk[edited]))
        edited = f'the gzip bytes of {edited}' if edited.endswith('.gz') else edited
    for name, data in on_disk.items():
        path = os.path.join(work, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as f:
            f.write(data)
    return os.path.join(work, named) if named else work, edited


def info(strata, env, target, fmt):
    r = subprocess.run([strata, 'info', '--graph', f'{fmt}:{target}', '--no-cache'], env=env, capture_output=True,
                       timeout=120)
    return r.returncode, r.stderr.decode('utf-8', 'replace')


def main():
    strata = sys.argv[1]
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    failures, codes = 0, {}
    with tempfile.TemporaryDirectory(prefix='strata-loader-fuzz-') as tmp:
        env = dict(os.environ, STRATA_CACHE_DIR=os.path.join(tmp, 'cache'), STRATA_MEMORY_LIMIT='2G')
        # Unedited, every seed loads; else its mutations would only test the error it already has.
        for k, (fmt, seeds, named) in enumerate(KINDS):
            code, err = info(strata, env, write_case(None, os.path.join(tmp, f'seed{k}'), seeds, named)[0], fmt)
            if code != 0:
                print(f'FAIL: the unedited {fmt} seed {k} ({named or "a folder"}) does not load: exit {code}\n{err}')
                return 1
        for n in range(cases):
            fmt, seeds, named = KINDS[n % len(KINDS)]  # every kind equally often
            work = os.path.join(tmp, f'case{n}')
            target, edited = write_case(rng, work, seeds, named)
            code, err = info(strata, env, target, fmt)
            codes[code] = codes.get(code, 0) + 1
            problem = fuzz_verdict.problem(code, err, False, target, 'the dataset')
            if problem:
                failures += 1
                keep = os.path.join(os.environ.get('TMPDIR', '/tmp'), f'strata-loader-fuzz-case{n}')
                shutil.copytree(work, keep, dirs_exist_ok=True)
                print(f'FAIL case {n} ({fmt}:{named or "a folder"}, edited {edited}; kept in {keep}): {problem}\n'
                      f'--- stderr ---\n{err[:2000]}')
            shutil.rmtree(work)
    return fuzz_verdict.tally(cases, codes, failures, 'mutated datasets', 'loaded and refused datasets')


if __name__ == '__main__':
    sys.exit(main())

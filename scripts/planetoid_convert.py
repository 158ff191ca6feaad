#!/usr/bin/env python3
"""Converts a Planetoid dataset (Cora, CiteSeer, PubMed as Yang et al. 2016 published them,
the files PyG and DGL download) into a DGL CSVDataset folder that `strata` loads with the
public split:
  strata train configs/gcn_cora.yaml --set data.dataset=dglcsv:OUT
(the shipped Cora and CiteSeer configs take a dataset's own split, data.split.kind: auto, and
draw a seeded Planetoid-sized one for LINQS's files, which have none).

Planetoid ships Python pickles: ind.<name>.{x,tx,allx} (scipy CSR feature rows),
ind.<name>.{y,ty,ally} (numpy one-hot labels), ind.<name>.graph (a dict of neighbour lists)
and ind.<name>.test.index (text). A C++ runtime cannot read pickles, so this converts them
once. It reads them with a restricted unpickler that knows only the four globals those files
name (numpy's array and dtype constructors, scipy's csr_matrix, defaultdict of list) and
decodes the arrays itself: no numpy or scipy needed, and a pickle that names anything else
(which an ordinary unpickler would import and call) is refused without running it.

The graph, features, labels and split are read as PyG's Planetoid loader reads them
(torch_geometric/io/planetoid.py): node k < len(allx) has allx's row k; tx's row k belongs
to node test.index[k]; test indices that skip nodes (CiteSeer's isolated papers) leave those
nodes with zero features and no label (-1); train = the first len(y) nodes, val = the next
500, test = the nodes of test.index; self-loops and repeated edges are dropped.

usage: planetoid_convert.py RAW_DIR NAME OUT_DIR
  RAW_DIR  the folder holding ind.NAME.x ... (PyG: <root>/Cora/raw)
  NAME     cora, citeseer or pubmed (the files' infix)
  OUT_DIR  the folder to write (meta.yaml, nodes.csv, edges.csv); must not exist. Written
           as OUT_DIR.partial-<pid> and renamed when complete.
Exit 1 with a message naming the file on bad input. Python standard library only.
"""
import collections
import math
import os
import pickle
import shutil
import struct
import sys

VAL_SIZE = 500  # Planetoid's validation nodes follow the training nodes


class ConvertError(Exception):
    pass


class DType:
    """numpy.dtype('i4' | 'f4' | ...); the byte order arrives with its state."""
    CODES = {'b1': '?', 'i1': 'b', 'u1': 'B', 'i2': 'h', 'u2': 'H', 'i4': 'i', 'u4': 'I', 'i8': 'q', 'u8': 'Q',
             'f4': 'f', 'f8': 'd'}

    def __init__(self, name, align=0, copy=1):
        if name not in self.CODES:
            raise pickle.UnpicklingError(f"array element type '{name}' (expected one of {', '.join(self.CODES)})")
        self.name, self.order = name, '<'

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) < 2 or state[1] not in ('<', '>', '|', '='):
            raise pickle.UnpicklingError(f'unexpected dtype state {state!r}')
        self.order = '<' if state[1] in ('|', '=') else state[1]


class Array:
    """numpy.ndarray rebuilt from its pickled state: a flat tuple of values and a shape."""

    def __init__(self, *_):
        self.shape, self.values, self.integer = (0,), (), True

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) != 5:
            raise pickle.UnpicklingError('unexpected ndarray state (expected version, shape, dtype, order, bytes)')
        _, shape, dtype, fortran, raw = state
        if not isinstance(dtype, DType) or not isinstance(shape, tuple) or not all(isinstance(d, int) for d in shape):
            raise pickle.UnpicklingError('unexpected ndarray state (object arrays are not read)')
        if isinstance(raw, str):  # a Python 2 str, read as latin-1
            raw = raw.encode('latin1')
        if not isinstance(raw, (bytes, bytearray)):
            raise pickle.UnpicklingError('unexpected ndarray data (expected raw bytes)')
        count = 1
        for d in shape:
            count *= d
        code = DType.CODES[dtype.name]
        if len(raw) != count * struct.calcsize(code):
            raise pickle.UnpicklingError(f'ndarray of shape {shape} and type {dtype.name} holds {len(raw)} bytes, '
                                         f'expected {count * struct.calcsize(code)}')
        if any(d < 0 for d in shape) or len(shape) > 2:
            raise pickle.UnpicklingError(f'ndarray of shape {shape} (expected one or two non-negative sizes)')
        values = struct.unpack(f'{dtype.order}{count}{code}', raw)
        if fortran and len(shape) == 2:  # column-major: transpose into rows
            rows, cols = shape
            values = tuple(values[c * rows + r] for r in range(rows) for c in range(cols))
        self.shape, self.values, self.integer = shape, values, code not in 'fd'

    def rows(self):
        """The rows of a 2-D array as tuples."""
        if len(self.shape) != 2:
            raise ConvertError(f'expected a 2-D array, got shape {self.shape}')
        n, m = self.shape
        return [self.values[r * m:(r + 1) * m] for r in range(n)]


class CsrMatrix:
    """scipy.sparse.csr_matrix: its pickled __dict__ holds shape, indptr, indices, data."""

    def rows(self, what):
        d = self.__dict__
        shape = d.get('_shape', d.get('shape'))
        parts = [d.get(k) for k in ('indptr', 'indices', 'data')]
        if d.get('format', 'csr') != 'csr' or not isinstance(shape, tuple) or len(shape) != 2 or \
                not all(isinstance(v, int) and v >= 0 for v in shape) or \
                not all(isinstance(p, Array) and len(p.shape) == 1 for p in parts) or \
                not (parts[0].integer and parts[1].integer):
            raise ConvertError(f'{what}: expected a scipy CSR matrix with a shape, integer indptr and indices, '
                               'and data')
        n, m = shape
        indptr, indices, data = (p.values for p in parts)
        if len(indptr) != n + 1 or indptr[0] != 0 or indptr[-1] != len(indices) or len(data) != len(indices) or \
                any(indptr[r] > indptr[r + 1] for r in range(n)) or any(not 0 <= c < m for c in indices):
            raise ConvertError(f'{what}: inconsistent CSR arrays (indptr, indices and data do not describe a '
                               f'{n} x {m} matrix)')
        if not all(math.isfinite(v) for v in data):
            raise ConvertError(f'{what}: holds NaN or infinite feature values')
        out = []
        for r in range(n):
            row = {}
            for k in range(indptr[r], indptr[r + 1]):
                row[indices[k]] = row.get(indices[k], 0.0) + data[k]
            out.append(row)
        return out, m


def _reconstructor(cls, base, state):
    """copy_reg._reconstructor, as older pickles build a csr_matrix."""
    if cls is not CsrMatrix:
        raise pickle.UnpicklingError('copy_reg._reconstructor of a class other than csr_matrix')
    return CsrMatrix()


def _reconstruct(cls, shape, typecode):
    return Array()


def _defaultdict(factory=None):
    """collections.defaultdict, for the graph's dict of neighbour lists only."""
    if factory is not list:
        raise pickle.UnpicklingError(f'a defaultdict of {factory!r} (expected of list)')
    return collections.defaultdict(list)


NDARRAY = object()  # numpy.ndarray: only passed to _reconstruct
GLOBALS = {
    ('numpy.core.multiarray', '_reconstruct'): _reconstruct,
    ('numpy._core.multiarray', '_reconstruct'): _reconstruct,
    ('numpy', 'ndarray'): NDARRAY,
    ('numpy', 'dtype'): DType,
    ('scipy.sparse.csr', 'csr_matrix'): CsrMatrix,
    ('scipy.sparse._csr', 'csr_matrix'): CsrMatrix,
    ('scipy.sparse', 'csr_matrix'): CsrMatrix,
    ('copy_reg', '_reconstructor'): _reconstructor,
    ('copyreg', '_reconstructor'): _reconstructor,
    ('collections', 'defaultdict'): _defaultdict,
    ('__builtin__', 'list'): list,
    ('builtins', 'list'): list,
    ('__builtin__', 'object'): object,
    ('builtins', 'object'): object,
}


class PlanetoidUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) not in GLOBALS:
            raise pickle.UnpicklingError(f"names '{module}.{name}', which a Planetoid file does not (expected numpy "
                                         'arrays, scipy CSR matrices and a dict of neighbour lists); not run')
        return GLOBALS[(module, name)]


def read_pickle(path):
    try:
        with open(path, 'rb') as f:
            return PlanetoidUnpickler(f, encoding='latin1').load()
    except OSError as e:
        raise ConvertError(f"'{path}': cannot read it ({e.strerror})")
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            struct.error, MemoryError, RecursionError, UnicodeError) as e:
        raise ConvertError(f"'{path}': not a Planetoid pickle: {e or type(e).__name__}")


def features(path):
    obj = read_pickle(path)
    if not isinstance(obj, CsrMatrix):
        raise ConvertError(f"'{path}': expected a scipy CSR matrix of features, got {type(obj).__name__}")
    return obj.rows(f"'{path}'")


def labels(path, classes=None):
    obj = read_pickle(path)
    if not isinstance(obj, Array) or len(obj.shape) != 2:
        raise ConvertError(f"'{path}': expected a 2-D numpy array of one-hot labels")
    if classes is not None and obj.shape[1] != classes:
        raise ConvertError(f"'{path}': {obj.shape[1]} label columns, expected {classes} as in the other label files")
    out = []
    for k, row in enumerate(obj.rows()):
        ones = [c for c, v in enumerate(row) if v != 0]
        if len(ones) > 1 or any(v not in (0, 1) for v in row):
            raise ConvertError(f"'{path}': row {k} is not one-hot ({len(ones)} non-zero entries)")
        out.append(ones[0] if ones else -1)  # an all-zero row: unlabelled
    return out, obj.shape[1]


def test_index(path):
    try:
        with open(path, encoding='ascii') as f:
            lines = f.read().split('\n')
    except (OSError, UnicodeError) as e:
        raise ConvertError(f"'{path}': cannot read it ({getattr(e, 'strerror', None) or e})")
    out = []
    for k, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(int(line))
        except ValueError:
            raise ConvertError(f"'{path}', line {k}: expected a node index, got {line.strip()[:40]!r}")
        if out[-1] < 0:
            raise ConvertError(f"'{path}', line {k}: negative node index {out[-1]}")
    if not out or len(set(out)) != len(out):
        raise ConvertError(f"'{path}': expected distinct node indices, one per line")
    return out


def edges(path, num_nodes):
    obj = read_pickle(path)
    if not isinstance(obj, dict):
        raise ConvertError(f"'{path}': expected a dict of neighbour lists, got {type(obj).__name__}")
    out = set()
    for src, dsts in obj.items():
        if not isinstance(src, int) or not isinstance(dsts, list) or not all(isinstance(d, int) for d in dsts):
            raise ConvertError(f"'{path}': expected integer node ids mapped to lists of them, got {src!r}")
        for d in [src] + dsts:
            if not 0 <= d < num_nodes:
                raise ConvertError(f"'{path}': node {d} is outside the {num_nodes} nodes the feature files give")
        out.update((src, d) for d in dsts if d != src)
    return sorted(out)


def number(v):
    return str(int(v)) if float(v).is_integer() else f'{v:.9g}'


def convert(raw_dir, name, out_dir):
    if os.path.lexists(out_dir):
        raise ConvertError(f"'{out_dir}': already exists (the output folder must not)")
    f = {k: os.path.join(raw_dir, f'ind.{name}.{k}') for k in ('x', 'tx', 'allx', 'y', 'ty', 'ally', 'graph',
                                                                  'test.index')}
    missing = [p for p in f.values() if not os.path.isfile(p)]
    if missing:
        raise ConvertError(f"'{raw_dir}': missing {', '.join(os.path.basename(p) for p in missing)} (expected the "
                           f'eight Planetoid files ind.{name}.{{x,tx,allx,y,ty,ally,graph,test.index}})')
    allx, dim = features(f['allx'])
    tx, tdim = features(f['tx'])
    x, xdim = features(f['x'])
    ally, classes = labels(f['ally'])
    ty, _ = labels(f['ty'], classes)
    y, _ = labels(f['y'], classes)
    test = test_index(f['test.index'])
    for what, n, d in (('tx', len(tx), tdim), ('x', len(x), xdim)):
        if d != dim:
            raise ConvertError(f"'{f[what]}': {d} feature columns, expected {dim} as in ind.{name}.allx")
    if len(ally) != len(allx) or len(ty) != len(tx) or len(y) != len(x):
        raise ConvertError(f"'{raw_dir}': label rows do not match feature rows (allx {len(allx)} / ally {len(ally)}, "
                           f'tx {len(tx)} / ty {len(ty)}, x {len(x)} / y {len(y)})')
    if x != allx[:len(x)] or y != ally[:len(y)]:
        raise ConvertError(f"'{raw_dir}': ind.{name}.x and ind.{name}.y are not the first rows of ind.{name}.allx and "
                           f'ind.{name}.ally (the training nodes come first in Planetoid\'s files)')
    if len(test) != len(tx):
        raise ConvertError(f"'{f['test.index']}': {len(test)} indices for the {len(tx)} rows of ind.{name}.tx")
    if min(test) != len(allx):
        raise ConvertError(f"'{f['test.index']}': the test nodes start at {min(test)}, expected {len(allx)} (they "
                           f'follow the {len(allx)} nodes of ind.{name}.allx)')
    if len(y) + VAL_SIZE > len(allx):
        raise ConvertError(f"'{raw_dir}': {len(y)} training and {VAL_SIZE} validation nodes, but ind.{name}.allx "
                           f'has only {len(allx)} rows')
    num_nodes = max(test) + 1
    feat = allx + [{} for _ in range(num_nodes - len(allx))]
    label = ally + [-1] * (num_nodes - len(allx))
    for k, v in enumerate(test):
        feat[v], label[v] = tx[k], ty[k]
    split = [''] * num_nodes
    for v in range(len(y)):
        split[v] = 'train'
    for v in range(len(y), len(y) + VAL_SIZE):
        split[v] = 'val'
    for v in test:
        split[v] = 'test'
    unlabelled = [v for v in range(num_nodes) if split[v] and label[v] < 0]
    if unlabelled:
        raise ConvertError(f"'{raw_dir}': {len(unlabelled)} training, validation or test nodes have no label "
                           f'(node {unlabelled[0]} first)')
    edge_list = edges(f['graph'], num_nodes)

    tmp = f'{out_dir.rstrip(os.sep)}.partial-{os.getpid()}'
    try:
        os.mkdir(tmp)
        with open(os.path.join(tmp, 'meta.yaml'), 'w') as out:
            out.write(f'dataset_name: {name}-planetoid\nedge_data:\n- file_name: edges.csv\n'
                      'node_data:\n- file_name: nodes.csv\n')
        with open(os.path.join(tmp, 'edges.csv'), 'w') as out:
            out.write('src_id,dst_id\n')
            out.writelines(f'{s},{d}\n' for s, d in edge_list)
        with open(os.path.join(tmp, 'nodes.csv'), 'w') as out:
            out.write('node_id,label,train_mask,val_mask,test_mask,feat\n')
            for v in range(num_nodes):
                row = feat[v]
                values = ','.join(number(row[c]) if c in row else '0' for c in range(dim))
                masks = ','.join('1' if split[v] == s else '0' for s in ('train', 'val', 'test'))
                out.write(f'{v},{label[v]},{masks},"{values}"\n')
        os.rename(tmp, out_dir)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError):
            raise ConvertError(f"'{out_dir}': cannot write it ({e.strerror or e})")
        raise
    return num_nodes, len(edge_list), dim, classes, len(y), len(test), num_nodes - len(allx) - len(test)


def main(argv):
    if len(argv) == 2 and argv[1] in ('-h', '--help'):
        print(__doc__)
        return 0
    if len(argv) != 4:
        print('usage: planetoid_convert.py RAW_DIR NAME OUT_DIR (--help says more)', file=sys.stderr)
        return 2
    try:
        n, e, dim, classes, train, test, gaps = convert(argv[1], argv[2], argv[3])
    except ConvertError as err:
        print(f'planetoid_convert: error: {err}', file=sys.stderr)
        return 1
    print(f"{argv[3]}: {n} nodes, {e} edges (directed, self-loops and repeats dropped), {dim} features, {classes} "
          f"classes; split {train} train / {VAL_SIZE} val / {test} test" +
          (f'; {gaps} nodes between the test indices have no features or label' if gaps else ''))
    print(f'train on it with its own split: strata train <config> --set data.dataset=dglcsv:{argv[3]} '
          '(a config whose data.split.kind is auto or dataset)')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

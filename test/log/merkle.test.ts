// The RFC 9162 Merkle tree over stored complete nodes: it reproduces the Certificate Transparency reference vectors,
// agrees with a naive transcription of the RFC's MTH/PATH/PROOF for every small tree, names exactly the stored nodes
// it needs, and its verifiers accept only genuine proofs.
import { describe, expect, it } from 'vitest';
import {
  EMPTY_ROOT, Frontier, type Hash, type NodeId, type StoredNode, consistencyNodes, consistencyProof, inclusionNodes,
  inclusionProof, leafHash, nodeHash, nodeSource, rootAt, rootNodes, rootOfLeaves, verifyConsistency, verifyInclusion,
} from '../../src/log/merkle.ts';

const hx = (h: Hash): string => h.toString('hex');
const unhex = (s: string): Hash => Buffer.from(s, 'hex');

// Reference data from transparency-dev/merkle (testonly/constants.go, proof/verify_test.go), the vectors Google's
// Certificate Transparency and Trillian implementations share. Leaf indices are 0-based here.
const REF_LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'];
const REF_NODES = [
  ['6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d', '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
    '0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7', '07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7',
    'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b', '4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658',
    'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f', '46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1'],
  ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
    '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a', 'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0'],
  ['d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7', '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4'],
  ['5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328'],
];
const REF_ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125', 'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7', '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef', 'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const [L0, L1, L2] = REF_NODES as [string[], string[], string[]];
const REF_PATHS: [m: number, n: number, path: string[]][] = [
  [0, 1, []],
  [0, 8, [L0[1]!, L1[1]!, L2[1]!]],
  [5, 8, [L0[4]!, L1[3]!, L2[0]!]],
  [2, 3, [L1[0]!]],
  [1, 5, [L0[0]!, L1[1]!, L0[4]!]],
];
const REF_PROOFS: [m: number, n: number, proof: string[]][] = [
  [1, 1, []],
  [1, 8, [L0[1]!, L1[1]!, L2[1]!]],
  [6, 8, [L1[2]!, L1[3]!, L2[0]!]],
  [2, 5, [L1[1]!, L0[4]!]],
  [6, 7, [L1[2]!, L0[6]!, L2[0]!]],
];

// A naive transcription of RFC 9162 §2.1.1, §2.1.3.1 and §2.1.4.1 over all leaf hashes in memory.
const split = (n: number): number => 2 ** Math.ceil(Math.log2(n) - 1);
function mth(d: readonly Hash[]): Hash {
  if (d.length === 0) return EMPTY_ROOT;
  if (d.length === 1) return d[0]!;
  const k = split(d.length);
  return nodeHash(mth(d.slice(0, k)), mth(d.slice(k)));
}
function path(m: number, d: readonly Hash[]): Hash[] {
  if (d.length <= 1) return [];
  const k = split(d.length);
  return m < k ? [...path(m, d.slice(0, k)), mth(d.slice(k))] : [...path(m - k, d.slice(k)), mth(d.slice(0, k))];
}
function subproof(m: number, d: readonly Hash[], b: boolean): Hash[] {
  if (m === d.length) return b ? [] : [mth(d)];
  const k = split(d.length);
  return m <= k ? [...subproof(m, d.slice(0, k), b), mth(d.slice(k))] : [...subproof(m - k, d.slice(k), false), mth(d.slice(0, k))];
}

const MAX = 70;
const LEAVES = Array.from({ length: MAX }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
const key = ({ level, index }: NodeId): string => `${level}/${index}`;

/** Every complete node of the MAX-leaf tree, as the log's node table would hold them. */
function storeOf(leaves: readonly Hash[]): Map<string, StoredNode> {
  const store = new Map<string, StoredNode>();
  for (let level = 0; 2 ** level <= leaves.length; level++) {
    for (let index = 0; (index + 1) * 2 ** level <= leaves.length; index++) {
      store.set(key({ level, index }), { level, index, hash: mth(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level)) });
    }
  }
  return store;
}
const STORE = storeOf(LEAVES);

/** Only the named nodes, as one query would return them; asserts they exist in a tree of size n and are distinct. */
function fetched(ids: readonly NodeId[], n: number): ReturnType<typeof nodeSource> {
  const outside = ids.filter(({ level, index }) => (index + 1) * 2 ** level > n);
  if (outside.length > 0 || new Set(ids.map(key)).size !== ids.length) expect({ n, ids }).toBe('distinct nodes inside the tree');
  return nodeSource(ids.map((id) => STORE.get(key(id))!));
}

const flip = (h: Hash): Hash => {
  const copy = Buffer.from(h);
  copy[0] = copy[0]! ^ 0x10;
  return copy;
};

describe('RFC 6962/9162 reference vectors', () => {
  const leaves = REF_LEAVES.map((s) => leafHash(unhex(s)));
  const store = storeOf(leaves);
  const node = (level: number, index: number): Hash => store.get(key({ level, index }))!.hash;

  it('hash the reference leaves and complete nodes to the reference values', () => {
    expect(hx(EMPTY_ROOT)).toBe(REF_ROOTS[0]);
    REF_NODES.forEach((level, l) => level.forEach((h, i) => expect(hx(node(l, i))).toBe(h)));
    expect(hx(nodeHash(leaves[0]!, leaves[1]!))).toBe(L1[0]);
  });

  it('give the reference root for every size, in memory, from stored nodes and from a Frontier', () => {
    const frontier = new Frontier(0, []);
    for (let n = 0; n <= 8; n++) {
      expect(hx(rootOfLeaves(leaves.slice(0, n)))).toBe(REF_ROOTS[n]);
      expect(hx(rootAt(n, node))).toBe(REF_ROOTS[n]);
      expect(hx(frontier.root())).toBe(REF_ROOTS[n]);
      if (n < 8) frontier.append(leaves[n]!);
    }
  });

  it.each(REF_PATHS)('give the reference inclusion path for leaf %i of %i, which verifies', (m, n, expected) => {
    expect(inclusionProof(m, n, node).map(hx)).toEqual(expected);
    expect(verifyInclusion(m, n, leaves[m]!, expected.map(unhex), unhex(REF_ROOTS[n]!))).toBe(true);
  });

  it.each(REF_PROOFS)('give the reference consistency proof from %i to %i, which verifies', (m, n, expected) => {
    expect(consistencyProof(m, n, node).map(hx)).toEqual(expected);
    expect(verifyConsistency(m, n, unhex(REF_ROOTS[m]!), unhex(REF_ROOTS[n]!), expected.map(unhex))).toBe(true);
  });
});

describe(`every tree up to ${MAX} leaves`, () => {
  const roots = Array.from({ length: MAX + 1 }, (_, n) => mth(LEAVES.slice(0, n)));

  it('roots from the stored root nodes equal the naive MTH and rootOfLeaves', () => {
    for (let n = 0; n <= MAX; n++) {
      expect(rootAt(n, fetched(rootNodes(n), n))).toEqual(roots[n]);
      expect(rootOfLeaves(LEAVES.slice(0, n))).toEqual(roots[n]);
    }
  });

  it('inclusion proofs from only the named stored nodes equal the naive PATH and verify', () => {
    for (let n = 1; n <= MAX; n++) {
      for (let m = 0; m < n; m++) {
        const proof = inclusionProof(m, n, fetched(inclusionNodes(m, n), n));
        expect(proof).toEqual(path(m, LEAVES.slice(0, n)));
        expect(verifyInclusion(m, n, LEAVES[m]!, proof, roots[n]!)).toBe(true);
      }
    }
  });

  it('consistency proofs from only the named stored nodes equal the naive PROOF and verify', () => {
    for (let n = 1; n <= MAX; n++) {
      for (let m = 1; m <= n; m++) {
        const proof = consistencyProof(m, n, fetched(consistencyNodes(m, n), n));
        expect(proof).toEqual(subproof(m, LEAVES.slice(0, n), true));
        expect(verifyConsistency(m, n, roots[m]!, roots[n]!, proof)).toBe(true);
      }
    }
  });

  it('a Frontier fed leaf by leaf yields every complete node exactly once and tracks the root', () => {
    const frontier = new Frontier(0, []);
    const yielded: StoredNode[] = [];
    for (let n = 1; n <= MAX; n++) {
      const completed = frontier.append(LEAVES[n - 1]!);
      expect(completed[0]).toEqual({ level: 0, index: n - 1, hash: LEAVES[n - 1] });
      expect(completed.map((c) => c.level)).toEqual(completed.map((_, i) => i));
      yielded.push(...completed);
      expect(frontier.size).toBe(n);
      expect(frontier.root()).toEqual(rootOfLeaves(LEAVES.slice(0, n)));
    }
    expect(new Map(yielded.map((node) => [key(node), node]))).toEqual(STORE);
    expect(yielded).toHaveLength(STORE.size);
  });

  it('a Frontier resumed from its edge nodes at any size reaches the same later roots', () => {
    for (let n = 0; n <= MAX; n++) {
      const resumed = new Frontier(n, Frontier.edgeNodes(n).map((id) => STORE.get(key(id))!.hash));
      expect(resumed.root()).toEqual(roots[n]);
      for (let next = n + 1; next <= MAX; next++) {
        resumed.append(LEAVES[next - 1]!);
        expect(resumed.root()).toEqual(roots[next]);
      }
    }
  });

  it('the verifiers reject a flipped bit, a wrong index or size, and a short or long proof', () => {
    const other = leafHash(Buffer.from('other'));
    for (let n = 1; n <= 40; n++) {
      for (let m = 0; m < n; m++) {
        const proof = path(m, LEAVES.slice(0, n));
        const leaf = LEAVES[m]!;
        const root = roots[n]!;
        const wrong: [number, number, Hash, Hash[], Hash][] = [
          [m - 1, n, leaf, proof, root], [m + 1, n, leaf, proof, root], [m ^ 2, n, leaf, proof, root],
          [m, n * 2, leaf, proof, root], [m, Math.floor(n / 2), leaf, proof, root],
          [m, n, flip(leaf), proof, root], [m, n, leaf, proof, flip(root)], [m, n, other, proof, root],
          [m, n, leaf, [...proof, root], root], [m, n, leaf, [root, ...proof], root],
          ...proof.map((_, i): [number, number, Hash, Hash[], Hash] => [m, n, leaf, proof.with(i, flip(proof[i]!)), root]),
          ...(proof.length > 0 ? [[m, n, leaf, proof.slice(0, -1), root] as [number, number, Hash, Hash[], Hash]] : []),
        ];
        for (const args of wrong) expect(verifyInclusion(...args), `inclusion ${m}/${n} probe ${args.slice(0, 2).join('/')}`).toBe(false);
      }
      for (let m = 1; m < n; m++) {
        const proof = subproof(m, LEAVES.slice(0, n), true);
        const [rm, rn] = [roots[m]!, roots[n]!];
        const wrong: [number, number, Hash, Hash, Hash[]][] = [
          [m - 1, n, rm, rn, proof], [m + 1, n, rm, rn, proof], [m ^ 2, n, rm, rn, proof],
          [m, n * 2, rm, rn, proof], [m, Math.floor(n / 2), rm, rn, proof], [m, n, rn, rm, proof],
          [m, n, flip(rm), rn, proof], [m, n, rm, flip(rn), proof], [m, n, rm, rn, []],
          [m, n, rm, rn, [...proof, rn]], [m, n, rm, rn, [rm, ...proof]], [m, n, rm, rn, proof.slice(0, -1)],
          ...proof.map((_, i): [number, number, Hash, Hash, Hash[]] => [m, n, rm, rn, proof.with(i, flip(proof[i]!))]),
        ];
        for (const args of wrong) expect(verifyConsistency(...args), `consistency ${m}/${n} probe ${args.slice(0, 2).join('/')}`).toBe(false);
      }
    }
  });
});

describe('malformed input', () => {
  const [a, b] = [LEAVES[0]!, LEAVES[1]!];
  const root2 = nodeHash(a, b);

  it('makes the verifiers return false instead of throwing', () => {
    expect(verifyInclusion(2, 2, a, [b], root2)).toBe(false);
    expect(verifyInclusion(-1, 2, a, [b], root2)).toBe(false);
    expect(verifyInclusion(0.5, 2, a, [b], root2)).toBe(false);
    expect(verifyInclusion(Number.NaN, 2, a, [b], root2)).toBe(false);
    expect(verifyInclusion(0, 2, a.subarray(0, 31), [b], root2)).toBe(false);
    expect(verifyInclusion(0, 2, a, [Buffer.concat([b, Buffer.of(0)])], root2)).toBe(false);
    expect(verifyInclusion(0, 2, a, [b], Buffer.alloc(0))).toBe(false);
    expect(verifyInclusion(0, 2, a, undefined as unknown as Hash[], root2)).toBe(false);
    expect(verifyInclusion(0, 1, a, [], a)).toBe(true);
    expect(verifyConsistency(0, 2, EMPTY_ROOT, root2, [])).toBe(false);
    expect(verifyConsistency(3, 2, root2, root2, [b])).toBe(false);
    expect(verifyConsistency(2, 2, root2, root2, [])).toBe(true);
    expect(verifyConsistency(2, 2, root2, root2, [root2])).toBe(false);
    expect(verifyConsistency(2, 2, root2, flip(root2), [])).toBe(false);
    expect(verifyConsistency(1, 2, a, root2, [b.subarray(1)])).toBe(false);
  });

  it('makes the proof builders throw RangeError for non-integer, negative or out-of-range sizes', () => {
    const node = nodeSource([]);
    for (const thunk of [
      () => rootNodes(-1), () => rootNodes(1.5), () => rootNodes(2 ** 53), () => rootAt(Number.NaN, node),
      () => inclusionNodes(3, 3), () => inclusionNodes(-1, 3), () => inclusionNodes(0, 0), () => inclusionProof(0.5, 3, node),
      () => consistencyNodes(0, 3), () => consistencyNodes(4, 3), () => consistencyProof(1, 1.5, node),
      () => new Frontier(3, [a]), () => new Frontier(-1, []),
    ]) expect(thunk).toThrow(RangeError);
  });

  it('makes a missing stored node fail loudly, naming its level and index', () => {
    const ids = inclusionNodes(0, 7);
    expect(ids).toEqual([{ level: 0, index: 1 }, { level: 1, index: 1 }, { level: 1, index: 2 }, { level: 0, index: 6 }]);
    const partial = nodeSource(ids.slice(0, 2).map((id) => STORE.get(key(id))!));
    expect(() => inclusionProof(0, 7, partial)).toThrow('merkle node (level 1, index 2) was not supplied');
    const sloppy = (() => undefined) as unknown as (level: number, index: number) => Hash;
    expect(() => rootAt(5, sloppy)).toThrow('merkle node (level 2, index 0) was not supplied');
  });

  it('names the nodes of large trees without losing precision past 2^32', () => {
    const n = 2 ** 40 + 5;
    expect(rootNodes(n)).toEqual([{ level: 40, index: 0 }, { level: 2, index: 2 ** 38 }, { level: 0, index: 2 ** 40 + 4 }]);
    expect(inclusionNodes(n - 1, n)).toEqual([{ level: 2, index: 2 ** 38 }, { level: 40, index: 0 }]);
  });
});

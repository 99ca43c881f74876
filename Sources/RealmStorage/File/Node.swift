/// Node types stored in the first byte of every node header (see docs/FILE_FORMAT.md, "Nodes").
enum NodeType: UInt8 {
    case tableInner = 1
    case cluster = 2
    case blob = 5
    case indexLeaf = 6
    case indexInner = 7
    /// The commit root: catalogue, free list and commit log of one version.
    case catalogue = 8
}

let pageSize = 4096
let nodeHeaderSize = 16
/// Storage a new table inner node or commit root array is given, so that recycled it fits another such node
/// (`NodeSink.smallNodeBuffer`, DECISIONS 64): a table inner node takes at most ~1.6 KiB.
let smallNodeCapacity = 4096

/// Builds a node: reserves the 16-byte header, lets the caller append the body, then seals length and checksum.
struct NodeBuilder {
    var w: ByteWriter
    let type: NodeType

    init(_ type: NodeType, capacity: Int = 256) {
        self.type = type
        w = ByteWriter(capacity: capacity)
        w.zeros(nodeHeaderSize)
    }

    /// A builder writing into `buffer`'s storage (see `ByteWriter.init(reusing:capacity:)`).
    init(_ type: NodeType, capacity: Int, reusing buffer: consuming [UInt8]) {
        self.type = type
        w = ByteWriter(reusing: buffer, capacity: capacity)
        w.zeros(nodeHeaderSize)
    }

    /// The finished node bytes, header filled in. Not padded to a page; the store pads.
    mutating func finish() -> [UInt8] {
        var bytes = w.bytes
        // The builder lets go of its buffer first, so the header is filled in place (otherwise every node was
        // copied whole by the first store into it).
        w.bytes = []
        sealNode(&bytes, type: type)
        return bytes
    }
}

/// Fills in the header of a node built with room for it: type, length and checksum.
func sealNode(_ bytes: inout [UInt8], type: NodeType) {
    precondition(bytes.count >= nodeHeaderSize, "a node has a header")
    bytes.withUnsafeMutableBytes { raw in
        raw.storeBytes(of: type.rawValue, toByteOffset: 0, as: UInt8.self)
        raw.storeBytes(of: UInt32(raw.count).littleEndian, toByteOffset: 4, as: UInt32.self)
    }
    let sum = nodeChecksum(bytes)
    bytes.withUnsafeMutableBytes { $0.storeBytes(of: sum.littleEndian, toByteOffset: 8, as: UInt64.self) }
}

/// The checksum of a node's bytes: `hash64` of them with the checksum field (bytes 8..<16) taken as zero. The
/// field holds it XOR the term of the node's page in files of format 6 (`pageChecksumTerm`, `bindNode`).
func nodeChecksum(_ node: UnsafeRawBufferPointer) -> UInt64 {
    let head = hash64(word: UInt64(littleEndian: node.loadUnaligned(as: UInt64.self)), seed: 0x5245_414C)
    return hash64(UnsafeRawBufferPointer(rebasing: node[nodeHeaderSize...]), seed: head)
}

func nodeChecksum(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { nodeChecksum($0) } }

/// The term a node's page adds to its stored checksum (format 6, DECISIONS 73): a bijective 64-bit mix of the
/// page number, so that no two pages share a term and a node's bytes checked at any page but their own fail.
@inline(__always) func pageChecksumTerm(_ page: UInt64) -> UInt64 { mix64(page ^ 0x5041_4745_5345_4544) }

/// Whether the checksum field of `node` is right for the node at `page`: `nodeChecksum` XOR the page's term
/// when `pageBound` (format 6), `nodeChecksum` alone in files of format 5 and before.
@inline(__always) func checksumHolds(_ node: UnsafeRawBufferPointer, page: UInt64, pageBound: Bool) -> Bool {
    (nodeChecksum(node) ^ (pageBound ? pageChecksumTerm(page) : 0)) == node.u64(at: 8)
}

/// Binds a sealed node to the page it is about to be written at (format 6): its checksum field gets the page's
/// term, XORed in place. Done once, where the page is chosen (`WriteTransaction.write`, the commit root);
/// every later copy of the bytes (the commit log record, a checkpoint, a replay) keeps the field as it is.
@inline(__always) func bindNode(_ bytes: inout [UInt8], toPage page: UInt64) {
    let term = pageChecksumTerm(page).littleEndian
    bytes.withUnsafeMutableBytes { raw in
        raw.storeBytes(of: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self) ^ term, toByteOffset: 8, as: UInt64.self)
    }
}

/// Number of pages a node of `length` bytes occupies.
@inline(__always) func pagesFor(bytes length: Int) -> Int { (length + pageSize - 1) / pageSize }

/// Read access to committed nodes of one snapshot.
protocol NodeSource: AnyObject {
    /// The bytes of the node at `ref` (its length taken from the header), checked against the file's bounds
    /// and, when `expected` is given, its type. Throws `StorageError.corrupt` naming the page otherwise.
    func node(_ ref: UInt64, expected: NodeType?) throws -> UnsafeRawBufferPointer
    /// The path of the database, for error messages.
    var displayPath: String { get }
    /// What lookups read of the committed table inner node at `ref` where they enter committed nodes (a
    /// tree's root, or a committed subtree under a node a transaction changed), if this source has kept it
    /// (`keepInnerLookup`; DECISIONS 63).
    func innerLookup(_ ref: UInt64) -> InnerLookup?
    /// Offers such a node as a lookup decoded it; the decoded form when the source keeps it (the decoded
    /// nodes below it then hang from it).
    func keepInnerLookup(_ ref: UInt64, _ view: InnerView) -> InnerLookup?
}

extension NodeSource {
    func innerLookup(_ ref: UInt64) -> InnerLookup? { nil }
    func keepInnerLookup(_ ref: UInt64, _ view: InnerView) -> InnerLookup? { nil }
}

/// Allocation within one write transaction. Written nodes become visible to this transaction at once and to
/// others at commit; freed nodes are reused only once no reader can still see them.
protocol NodeSink: NodeSource {
    /// Writes a finished node (from `NodeBuilder.finish()`) into free space and returns its ref. In a file of
    /// format 6 the node is bound to its page first (`bindNode`): `node` becomes the bytes written there.
    func write(_ node: inout [UInt8]) throws -> UInt64
    /// Marks the node at `ref`, which belongs to the version this transaction started from, as free from the
    /// version this transaction commits.
    func free(_ ref: UInt64) throws
    /// `free(_:)` for a node known to be `bytes` long (one a commit of this process wrote and kept decoded),
    /// without reading it.
    func free(_ ref: UInt64, bytes: Int) throws
    /// Gives back a node this transaction wrote and no longer needs (never visible to anyone else).
    func discard(_ ref: UInt64) throws
    /// The decoded copy of the cluster at `ref`, if the commit that wrote it kept one (`DecodedLeaves`), with
    /// the length of the node.
    func decodedLeaf(_ ref: UInt64, properties: [PropertyInfo]) -> (leaf: DirtyLeaf, bytes: Int)?
    /// Tells the sink that `leaf`, encoded whole, was written at `ref`, without blobs.
    func wroteLeaf(_ leaf: DirtyLeaf, ref: UInt64, node: [UInt8], properties: [PropertyInfo])
    /// The decoded copy of the table inner node at `ref`, if the commit that wrote it kept one, with the length
    /// of the node.
    func decodedInner(_ ref: UInt64) -> (node: DirtyInner, bytes: Int)?
    /// Tells the sink that `inner`, whose children are all committed, was written whole at `ref` as a node of
    /// `bytes` bytes.
    func wroteInner(_ inner: DirtyInner, ref: UInt64, bytes: Int)
    /// The decoded copy of the index node at `ref`, if the commit that wrote it kept one.
    func decodedIndexNode(_ ref: UInt64) -> EntryTreeNode?
    /// Tells the sink that `node`, whose children are all committed, was written at `ref`.
    func wroteIndexNode(_ node: EntryTreeNode, ref: UInt64)
    /// An array with storage for an index node about to be built (its old bytes are overwritten), from the
    /// arrays of index nodes an earlier commit built (DECISIONS 64); one without storage when the sink keeps none.
    func nodeBuffer() -> [UInt8]
    /// The array of a cluster an earlier commit built and no longer needs, for the next cluster to be built
    /// in; one without storage when there is none.
    func clusterBuffer() -> [UInt8]
    /// The array of a table inner node or commit root an earlier commit built, for another such node; one
    /// without storage when there is none.
    func smallNodeBuffer() -> [UInt8]
    /// Keeps `bytes`, a cluster's array nothing reads any more, for `clusterBuffer()`.
    func recycleClusterBuffer(_ bytes: consuming [UInt8])
    /// Whether nodes are written in the forms a build of format 5 reads: a file kept at format 5 while another
    /// process has it open (see docs/FILE_FORMAT.md, "Upgrading a file of format 5"). String columns are then
    /// never in dictionary form; index trees have `EntryTree.Limits.format5` (no prefix leaves).
    var writesFormat5Nodes: Bool { get }
}

extension NodeSink {
    /// `write(_:)` of a node the caller keeps no copy of.
    func write(_ node: consuming [UInt8]) throws -> UInt64 {
        var bytes = consume node
        return try write(&bytes)
    }

    func decodedLeaf(_ ref: UInt64, properties: [PropertyInfo]) -> (leaf: DirtyLeaf, bytes: Int)? { nil }
    func wroteLeaf(_ leaf: DirtyLeaf, ref: UInt64, node: [UInt8], properties: [PropertyInfo]) {}
    func free(_ ref: UInt64, bytes: Int) throws { try free(ref) }
    func decodedInner(_ ref: UInt64) -> (node: DirtyInner, bytes: Int)? { nil }
    func wroteInner(_ inner: DirtyInner, ref: UInt64, bytes: Int) {}
    func decodedIndexNode(_ ref: UInt64) -> EntryTreeNode? { nil }
    func wroteIndexNode(_ node: EntryTreeNode, ref: UInt64) {}
    func nodeBuffer() -> [UInt8] { [] }
    func clusterBuffer() -> [UInt8] { [] }
    func smallNodeBuffer() -> [UInt8] { [] }
    func recycleClusterBuffer(_ bytes: consuming [UInt8]) {}
    var writesFormat5Nodes: Bool { false }
}

extension NodeSource {
    func corrupt(_ ref: UInt64, _ reason: String) -> StorageError {
        .corrupt(path: displayPath, location: "node at page \(ref)", reason: reason)
    }

    /// Row `i` of a column of the node at `ref`; damage the codec finds is reported as `StorageError.corrupt`.
    func value(_ r: ColumnReader, at i: Int, node ref: UInt64) throws -> Value {
        do {
            return try r.value(at: i, loadBlob: { try blob($0, length: $1) })
        } catch let e as CodecError {
            throw corrupt(ref, "row \(i): \(e.reason)")
        }
    }
}

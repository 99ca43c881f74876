#if canImport(Glibc)
import Glibc
#endif
import Atomics
internal import CStorageSupport

/// One read-only (file) or read-write (memory) view of the database's pages.
///
/// The mapping reserves far more address space than the file needs, so the file can grow without remapping;
/// when it outgrows the reservation a new, larger mapping is made and the old one stays alive for as long as
/// a snapshot still references it.
final class Mapping: @unchecked Sendable {
    // Safe to share: the mapped memory is never written through this object for files, and for in-memory
    // stores every write happens under the writer lock into pages no published snapshot can reach.
    let base: UnsafeMutableRawPointer
    let length: Int
    /// For an encrypted file this mapping is the plaintext mirror, filled page by page on first read
    /// (`materializeNode`); nil otherwise.
    ///
    /// Unowned: a weak load on every node read cost more than the decryption check itself (`perf`). The store
    /// outlives every mapping in use: a snapshot holds its database, which holds the store, and the store is
    /// only replaced (compaction) while no snapshot of the process is open.
    unowned(unsafe) var encryptedStore: PageStore?

    /// For a file: per page, the checksum of the node found there the last time this process checked it
    /// (`checksumMatches`); nil for memory, whose nodes no one but this process ever wrote.
    let checkedSums: CheckedChecksums?
    /// `checkedSums`' words and their count, read on every node read without touching the object's reference count.
    private let sumWords: UnsafeMutableRawPointer?
    private let sumPages: UInt64

    init(base: UnsafeMutableRawPointer, length: Int, checkedSums: CheckedChecksums? = nil) {
        self.base = base
        self.length = length
        self.checkedSums = checkedSums
        sumWords = checkedSums?.words
        sumPages = checkedSums?.pages ?? 0
    }

    /// Whether the node at `ref` (its bytes `node`, length from its header) matches its checksum: computed the
    /// first time this process reads the node, then taken as known while the page holds a node with the same
    /// checksum field (a node never changes while a version can reach it; a node written over a freed one
    /// brings its own checksum, so it is checked in turn). `pageBound`: the field includes the term of the
    /// node's page (format 6, `checksumHolds`), so a node found at another page than its own fails. A file's
    /// nodes follow one rule for as long as a store has it open (only compaction, which makes a new store,
    /// changes a file's format), so a word found right under one rule is never taken for the other.
    @inline(__always) func checksumMatches(_ node: UnsafeRawBufferPointer, ref: UInt64, pageBound: Bool) -> Bool {
        guard let words = sumWords else { return true }
        let stored = node.u64(at: 8)
        let word = ref < sumPages ? CheckedChecksums.word(words, ref) : nil
        if let word, word.load(ordering: .relaxed) == stored { return true }
        guard checksumHolds(node, page: ref, pageBound: pageBound) else { return false }
        word?.store(stored, ordering: .relaxed)
        return true
    }

    /// Records that the node at `ref` is known to match its checksum without computing it: for a node this
    /// process sealed and wrote itself, whose bytes no disk has touched since (a commit's own nodes, served
    /// from its record in memory until a checkpoint copies them to the file with the same checksum field).
    @inline(__always) func noteChecked(_ node: UnsafeRawBufferPointer, ref: UInt64) {
        guard let words = sumWords, ref < sumPages else { return }
        CheckedChecksums.word(words, ref).store(node.u64(at: 8), ordering: .relaxed)
    }

    /// Makes the pages of the node at `ref` readable in this mapping (decrypting and authenticating them)
    /// when the file is encrypted; nothing otherwise.
    @inline(__always) func materializeNode(_ ref: UInt64, limit: UInt64) throws {
        guard let store = encryptedStore else { return }
        try store.materializeNode(ref, limit: limit)
    }

    /// Makes the two meta slots readable: a slot that fails authentication reads as zeros (an empty slot).
    func materializeMetaSlots() {
        guard let store = encryptedStore else { return }
        store.materializeMetaSlots()
    }

    deinit { munmap(base, length) }
}

/// The table behind `Mapping.checksumMatches`: one 64-bit word per page, in anonymous memory backed only where
/// touched, shared by every mapping of one store. Pages past its end are checked on every read.
final class CheckedChecksums: @unchecked Sendable {
    // Safe to share: every word is read and written with relaxed atomics; a word only ever holds a checksum
    // that matched the node its page held (or 0), so a racing reader sees either, and re-checks at worst.
    private let table: Mapping
    var words: UnsafeMutableRawPointer { table.base }
    let pages: UInt64

    init(pages: Int, path: String) throws {
        table = try PageStore.mapAnonymous(length: pages * 8, path: path)
        self.pages = UInt64(pages)
    }

    /// The word of page `ref` (below `pages`) in the table at `words`.
    @inline(__always) static func word(_ words: UnsafeMutableRawPointer, _ ref: UInt64) -> UnsafeAtomic<UInt64> {
        UnsafeAtomic(at: (words + Int(ref) * 8).assumingMemoryBound(to: UInt64.AtomicRepresentation.self))
    }
}

import Foundation

/// One state of the directory a power cut can leave at `point` (after the first `point` operations of the
/// trace): every write and truncation that was synced by then is there; of the unsynced ones, those in `kept`
/// are there whole, `torn` is there in part (only some of its 512-byte sectors), the others never reached the
/// disk; every creation, rename and unlink not followed by an `fsync` of the directory happened, except those
/// in `undone`.
struct PowerLossState {
    var point: Int
    var kept: Set<Int> = []
    var torn: (op: Int, sectors: [Int])?
    var undone: Set<Int> = []
    var lockFile: LockFileContents = .absent
    var label: String

    enum LockFileContents {
        case absent
        /// A lock file of this size that holds zeros: created and sized, its mapped writes never written back.
        case zeros(Int)
        /// A copy of the lock file the process left behind.
        case copy([UInt8])
    }
}

extension PowerLossTrace {
    /// The index of the operation that made each operation durable (`Int.max` for never, and for operations
    /// that are not writes, truncations or directory changes).
    func durableAt() -> [Int] {
        var out = [Int](repeating: Int.max, count: ops.count)
        var nextSync: [Int: Int] = [:]
        var nextDirectorySync = Int.max
        var syncedWrite: [Int: Int] = [:]
        for i in stride(from: ops.count - 1, through: 0, by: -1) {
            switch ops[i] {
            case .sync(let f): nextSync[f] = i
            case .syncDirectory: nextDirectorySync = i
            case .syncWrite(let op): syncedWrite[op] = i
            case .write(let f, _, _), .truncate(let f, _):
                out[i] = min(nextSync[f] ?? Int.max, syncedWrite[i] ?? Int.max)
            case .create, .rename, .unlink:
                out[i] = nextDirectorySync
            case .ack:
                break
            }
        }
        return out
    }

    /// The files `state` holds, by name. `bases` (from `baseImages`, for the same point) saves applying the
    /// durable operations again for each state.
    func files(_ state: PowerLossState, durableAt: [Int], bases: [Int: [UInt8]] = [:]) -> [(name: String, bytes: [UInt8])] {
        var directory: [String: Int] = [:]
        for i in 0..<state.point where !state.undone.contains(i) {
            switch ops[i] {
            case .create(let name, let file): directory[name] = file
            case .rename(let from, let to): if let f = directory.removeValue(forKey: from) { directory[to] = f }
            case .unlink(let name): directory[name] = nil
            default: break
            }
        }
        var images: [Int: [UInt8]] = [:]
        for f in directory.values { images[f] = bases[f] ?? [] }
        for i in 0..<state.point {
            guard let f = ops[i].file, ops[i].isDataOp, images[f] != nil else { continue }
            let durable = durableAt[i] < state.point
            if durable && bases[f] != nil { continue }
            let whole = durable || state.kept.contains(i)
            let sectors: [Int]? = whole ? nil : (state.torn?.op == i ? state.torn!.sectors : [])
            if sectors?.isEmpty == true { continue }
            apply(i, sectors: sectors, to: &images[f]!)
        }
        return directory.sorted { $0.key < $1.key }.map { (name: $0.key, bytes: images[$0.value]!) }
    }

    /// For each file whose durable operations at `point` all come before its unsynced ones (every file but
    /// one written with `O_DSYNC` after a buffered write), its image with only the durable ones applied.
    func baseImages(at point: Int, durableAt: [Int]) -> [Int: [UInt8]] {
        var lastDurable: [Int: Int] = [:], firstUnsynced: [Int: Int] = [:]
        for i in 0..<point where ops[i].isDataOp {
            let f = ops[i].file!
            if durableAt[i] < point { lastDurable[f] = i } else if firstUnsynced[f] == nil { firstUnsynced[f] = i }
        }
        var out: [Int: [UInt8]] = [:]
        for f in Set(lastDurable.keys).union(firstUnsynced.keys) where (lastDurable[f] ?? -1) < (firstUnsynced[f] ?? Int.max) {
            var image: [UInt8] = []
            for i in 0..<point where ops[i].isDataOp && ops[i].file == f && durableAt[i] < point { apply(i, sectors: nil, to: &image) }
            out[f] = image
        }
        return out
    }

    /// Applies the write or truncation at `op`: whole, or only the 512-byte `sectors` it touches (counted
    /// from its first).
    private func apply(_ op: Int, sectors: [Int]?, to image: inout [UInt8]) {
        switch ops[op] {
        case .truncate(_, let size):
            // A negative size is a minimum (`fallocate`).
            let n = size >= 0 ? size : max(image.count, -size)
            if n < image.count { image.removeLast(image.count - n) } else {
                image.append(contentsOf: [UInt8](repeating: 0, count: n - image.count))
            }
        case .write(_, let offset, let bytes):
            if let sectors {
                for s in sectors {
                    let lo = max(offset, (offset / 512 + s) * 512), hi = min(offset + bytes.count, (offset / 512 + s + 1) * 512)
                    if lo < hi { Self.put(bytes[(lo - offset)..<(hi - offset)], at: lo, into: &image) }
                }
            } else {
                Self.put(bytes[...], at: offset, into: &image)
            }
        default:
            break
        }
    }

    private static func put(_ bytes: ArraySlice<UInt8>, at offset: Int, into image: inout [UInt8]) {
        if image.count < offset + bytes.count { image.append(contentsOf: [UInt8](repeating: 0, count: offset + bytes.count - image.count)) }
        image.withUnsafeMutableBytes { dst in
            bytes.withUnsafeBytes { src in (dst.baseAddress! + offset).copyMemory(from: src.baseAddress!, byteCount: src.count) }
        }
    }

    /// How many 512-byte sectors the write at `op` touches.
    func sectorCount(_ op: Int) -> Int {
        guard case .write(_, let offset, let bytes) = ops[op], !bytes.isEmpty else { return 0 }
        return (offset + bytes.count - 1) / 512 - offset / 512 + 1
    }

    /// The states a power cut at `point` can leave, as chosen by `exhaustive`: every state with all unsynced
    /// operations kept, none kept, the last unsynced write torn (its first half of sectors, and every other
    /// sector), every directory change undone; then, exhaustively, each unsynced operation alone dropped and
    /// alone kept, each unsynced write torn, and `randomSubsets` random subsets; bounded, `samples` of those.
    func states(at point: Int, durableAt: [Int], exhaustive: Bool, samples: Int, randomSubsets: Int,
                using rng: inout some RandomNumberGenerator) -> [PowerLossState] {
        let unsynced = (0..<point).filter { ops[$0].isDataOp && durableAt[$0] >= point }
        let directoryChanges = (0..<point).filter { ops[$0].isDirectoryOp && durableAt[$0] >= point }
        let all = Set(unsynced)
        var out = [PowerLossState(point: point, kept: all, label: "every unsynced write kept")]
        if unsynced.isEmpty && directoryChanges.isEmpty { return out }
        out.append(PowerLossState(point: point, label: "no unsynced write kept"))
        let writes = unsynced.filter { sectorCount($0) > 1 }
        func tears(_ w: Int) -> [PowerLossState] {
            let n = sectorCount(w)
            return [PowerLossState(point: point, kept: all.subtracting([w]), torn: (w, Array(0..<n / 2)),
                                   label: "#\(w) torn (its first \(n / 2) of \(n) sectors), the rest kept"),
                    PowerLossState(point: point, kept: all.subtracting([w]), torn: (w, Array(stride(from: 1, to: n, by: 2))),
                                   label: "#\(w) torn (every other sector of \(n)), the rest kept")]
        }
        if let last = writes.last { out += tears(last) }
        if !directoryChanges.isEmpty {
            let u = Set(directoryChanges)
            out.append(PowerLossState(point: point, kept: all, undone: u, label: "every unsynced write kept, every unsynced directory change undone"))
            out.append(PowerLossState(point: point, undone: u, label: "nothing unsynced kept"))
            for d in directoryChanges where directoryChanges.count > 1 {
                out.append(PowerLossState(point: point, kept: all, undone: [d], label: "every unsynced write kept, #\(d) undone"))
            }
        }
        var more: [PowerLossState] = []
        for w in unsynced where unsynced.count > 1 {
            more.append(PowerLossState(point: point, kept: all.subtracting([w]), label: "every unsynced write kept but #\(w)"))
            more.append(PowerLossState(point: point, kept: [w], label: "only #\(w) of the unsynced writes kept"))
        }
        if exhaustive { for w in writes.dropLast() { more += tears(w) } }
        for k in 0..<randomSubsets where unsynced.count > 2 {
            var kept = Set(unsynced.filter { _ in Bool.random(using: &rng) })
            var torn: (op: Int, sectors: [Int])?
            let candidates = writes.filter { !kept.contains($0) }
            if let w = candidates.randomElement(using: &rng), Bool.random(using: &rng) {
                torn = (w, (0..<sectorCount(w)).filter { _ in Bool.random(using: &rng) })
                kept.remove(w)
            }
            more.append(PowerLossState(point: point, kept: kept, torn: torn,
                                       label: "random subset \(k): kept \(kept.sorted())" + (torn.map { ", #\($0.op) torn to sectors \($0.sectors)" } ?? "")))
        }
        if exhaustive { return out + more }
        more.shuffle(using: &rng)
        return out + more.prefix(samples)
    }
}

import Foundation
@testable import RealmCoreFile
import Testing
import TestSupport

/// Damaged copies of real files: bit flips, truncations, forged node sizes, forged refs and ref loops. Every
/// one opens and reads to the end or throws a `RealmCoreFileError`; none traps, crashes or hangs.
/// `REALM_CORE_MUTATIONS=N` runs N mutations per fixture instead of 60.
@Suite struct MutationTests {
    static let perFixture = ProcessInfo.processInfo.environment["REALM_CORE_MUTATIONS"].flatMap { Int($0) } ?? 60

    static let fixtures = ["java/0.90.4-alltypes.realm", "java/0.98.0-alltypes.realm", "core/test_upgrade_database_4_9_to_10.realm",
                           "core/test_upgrade_database_9_to_10_pk_table.realm", "java/6.0.0-beta.2-alltypes.realm",
                           "core/test_upgrade_database_4_22.realm", "core/test_upgrade_database_4_23.realm",
                           "core/test_upgrade_database_4_24.realm", "core/test_flx_metadata_tables_v1.realm",
                           "java/0.98.0-alltypes-default-encrypted.realm"]

    enum Mutation: CaseIterable { case bitFlips, truncation, forgedSize, forgedRef, refLoop, zeroedNode }

    /// The fixtures, and the file of layouts no fixture has (`UncoveredLayoutTests`).
    @Test(arguments: fixtures + ["built:layouts"])
    func damagedCopiesGiveErrorsNotCrashes(_ name: String) throws {
        let original = name == "built:layouts" ? UncoveredLayoutTests.layoutsImage()
            : try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.path(name))))
        let key = Fixtures.key(name)
        let dir = TempDir()
        let path = dir.file("damaged.realm")
        var rng = SplitMix64(seed: name.utf8.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 })
        var outcomes: [String: Int] = [:]
        for round in 0..<Self.perFixture {
            let mutation = Mutation.allCases[round % Mutation.allCases.count]
            let bytes = Self.mutate(original, mutation, encrypted: key != nil, rng: &rng)
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            Self.tally(&outcomes, "\(mutation) round \(round)") {
                _ = try RealmCoreFile(path: path, key: key).readEverything(limit: 2000)
            }
        }
        #expect(outcomes.values.reduce(0, +) == Self.perFixture)
    }

    /// Runs `read` over a damaged copy and counts how it ended: read, or a `RealmCoreFileError` that says
    /// something; any other error is an issue.
    static func tally(_ outcomes: inout [String: Int], _ what: String, _ read: () throws -> Void) {
        do {
            try read()
            outcomes["read", default: 0] += 1
        } catch let error as RealmCoreFileError {
            #expect(!"\(error)".isEmpty)
            outcomes["error", default: 0] += 1
        } catch {
            Issue.record("\(what): a non-RealmCoreFileError \(error)")
        }
    }

    static func everything(_ f: RealmCoreFile) throws -> [[CoreValue]] {
        try (f.classes + f.systemTables).flatMap { c in try (0..<c.objectCount).map { try f.object(of: c, at: $0).values } }
    }

    /// Offsets of the nodes reachable from the top array of the unencrypted `bytes`: a plain walk of every
    /// even non-zero slot of every has-refs node, independent of the reader.
    static func nodeOffsets(_ bytes: [UInt8]) -> [Int] {
        guard bytes.count >= 40 else { return [] }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
        var top = bytes[23] & 1 == 0 ? u64(0) : u64(8)
        if bytes[23] & 1 == 0 && top == UInt64.max { top = u64(bytes.count - 16) }
        var queue = [Int(truncatingIfNeeded: top)], seen = Set<Int>(), order: [Int] = []
        while let n = queue.popLast(), order.count < 5000 {
            guard n > 0, n % 8 == 0, n + 8 <= bytes.count, seen.insert(n).inserted else { continue }
            order.append(n)
            let flags = bytes[n + 4]
            let width = (1 << Int(flags & 7)) >> 1
            let count = Int(bytes[n + 5]) << 16 | Int(bytes[n + 6]) << 8 | Int(bytes[n + 7])
            guard flags & 0x40 != 0, width >= 8, flags & 0x18 == 0, n + 8 + count * width / 8 <= bytes.count else { continue }
            for i in 0..<count {
                var v = 0
                for b in 0..<(width / 8) { v |= Int(bytes[n + 8 + i * width / 8 + b]) << (8 * b) }
                if v > 0 && v % 8 == 0 && v < bytes.count { queue.append(v) }
            }
        }
        return order
    }

    static func mutate(_ original: [UInt8], _ mutation: Mutation, encrypted: Bool, rng: inout SplitMix64) -> [UInt8] {
        var bytes = original
        let nodes = encrypted ? [] : nodeOffsets(bytes)
        func anyNode() -> Int? { nodes.isEmpty ? nil : nodes[Int(rng.next() % UInt64(nodes.count))] }
        switch mutation {
        case .bitFlips:
            for _ in 0..<(1 + Int(rng.next() % 8)) {
                let i = Int(rng.next() % UInt64(bytes.count))
                bytes[i] ^= UInt8(1 << (rng.next() % 8))
            }
        case .truncation:
            bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count))))
        case .forgedSize:
            guard let n = anyNode() else { return mutate(original, .bitFlips, encrypted: encrypted, rng: &rng) }
            let sizes: [UInt32] = [0, 1, 0xFF_FFFF, UInt32(rng.next() % 0x100_0000), UInt32(rng.next() % 300)]
            let size = sizes[Int(rng.next() % UInt64(sizes.count))]
            bytes[n + 5] = UInt8(size >> 16 & 0xFF)
            bytes[n + 6] = UInt8(size >> 8 & 0xFF)
            bytes[n + 7] = UInt8(size & 0xFF)
            if rng.next() % 2 == 0 { bytes[n + 4] = UInt8(rng.next() & 0xFF) }  // width, scheme and flags too
        case .forgedRef, .refLoop:
            guard let n = anyNode(), bytes[n + 4] & 0x40 != 0 else { return mutate(original, .bitFlips, encrypted: encrypted, rng: &rng) }
            let width = (1 << Int(bytes[n + 4] & 7)) >> 1
            let count = Int(bytes[n + 5]) << 16 | Int(bytes[n + 6]) << 8 | Int(bytes[n + 7])
            guard width >= 8, count > 0 else { return mutate(original, .bitFlips, encrypted: encrypted, rng: &rng) }
            let slot = Int(rng.next() % UInt64(count))
            let target: UInt64
            if mutation == .refLoop {
                target = rng.next() % 2 == 0 ? UInt64(n) : UInt64(nodes[Int(rng.next() % UInt64(nodes.count))])
            } else {
                let choices: [UInt64] = [UInt64(bytes.count) + 8, (rng.next() % UInt64(bytes.count)) & ~7, rng.next() & ~7, 8, UInt64(bytes.count - 8) & ~7]
                target = choices[Int(rng.next() % UInt64(choices.count))]
            }
            let at = n + 8 + slot * width / 8
            for b in 0..<(width / 8) where at + b < bytes.count { bytes[at + b] = UInt8(truncatingIfNeeded: target >> (8 * UInt64(b))) }
        case .zeroedNode:
            guard let n = anyNode() else { return mutate(original, .truncation, encrypted: encrypted, rng: &rng) }
            for i in n..<min(bytes.count, n + 8 + Int(rng.next() % 64)) { bytes[i] = 0 }
        }
        return bytes
    }

    /// Hand-made loops: every B+tree inner node (and every cluster inner node) of a file whose first child is made
    /// the node itself. Each copy is a clear error.
    @Test(arguments: ["core/test_upgrade_database_4_1.realm", "core/test_upgrade_database_4_23.realm"])
    func anInnerNodeThatContainsItselfIsAnError(_ name: String) throws {
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.path(name))))
        let inner = Self.nodeOffsets(original).filter { original[$0 + 4] & 0xC0 == 0xC0 }
        #expect(inner.count > 3)
        let dir = TempDir()
        let path = dir.file("loop.realm")
        let intact = try Self.everything(try Fixtures.open(name))
        var errors = 0
        // Spread over the file: search-index nodes (which the reader never reads) and column nodes alike.
        for n in stride(from: 0, to: inner.count, by: max(1, inner.count / 50)).map({ inner[$0] }) {
            var bytes = original
            let width = (1 << Int(bytes[n + 4] & 7)) >> 1
            let slot = name.contains("_23") ? 3 : 1  // the first child (cluster inner nodes keep 3 slots before theirs)
            for b in 0..<(width / 8) { bytes[n + 8 + slot * width / 8 + b] = UInt8(truncatingIfNeeded: n >> (8 * b)) }
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            do {
                // A loop in a structure the reader never reads (a search index) leaves every value as it was.
                #expect(try Self.everything(try RealmCoreFile(path: path)) == intact, "loop at \(n)")
            } catch is RealmCoreFileError {
                errors += 1
            }
        }
        #expect(errors > 0)
    }
}

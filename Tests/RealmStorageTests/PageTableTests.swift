import Foundation
import Synchronization
import Testing
@testable import RealmStorage

/// The log's page table (DECISIONS 53): lookups without locks while one thread adds and replaces entries and
/// the table grows under them.
@Suite struct PageTableTests {
    static func location(_ page: UInt64, _ round: Int) -> PageTable.Location {
        PageTable.Location(bytes: UnsafeRawPointer(bitPattern: 0x1000)!, length: Int(page), offset: round * 1_000_000 + Int(page))
    }

    @Test func lookupsSeeEveryEntryAddedBeforeThemWhileItGrows() throws {
        let table = PageTable()
        let pages = 20_000
        let added = Atomic<Int>(1)  // pages 2...added hold an entry
        let failures = Atomic<Int>(0)
        let done = Atomic<Bool>(false)
        let readers = (0..<2).map { r in
            Thread {
                var rng = SplitMix64(seed: UInt64(r + 1))
                while !done.load(ordering: .acquiring) {
                    let upTo = added.load(ordering: .acquiring)
                    guard upTo >= 2 else { continue }
                    let p = UInt64(2 + Int(rng.next() % UInt64(upTo - 1)))
                    guard let at = table.get(p), at.length == Int(p), at.offset % 1_000_000 == Int(p) else {
                        failures.add(1, ordering: .relaxed)
                        continue
                    }
                    if table.get(UInt64(pages + 10 + Int(rng.next() % 1000))) != nil { failures.add(1, ordering: .relaxed) }
                }
            }
        }
        readers.forEach { $0.start() }
        for p in 2...pages {
            table.set(UInt64(p), Self.location(UInt64(p), 0))
            // Replace an older entry now and then (a page a later commit wrote again).
            if p % 7 == 0 { table.set(UInt64(p / 2), Self.location(UInt64(p / 2), p)) }
            added.store(p, ordering: .releasing)
        }
        done.store(true, ordering: .releasing)
        while readers.contains(where: { !$0.isFinished }) { usleep(1000) }
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(table.count == pages - 1)
        let all = table.all()
        #expect(all.count == pages - 1)
        #expect(all.allSatisfy { $0.1.length == Int($0.0) && $0.1.offset % 1_000_000 == Int($0.0) })
        // The last entry set for a page wins.
        #expect(table.get(10)?.offset == 21 * 1_000_000 + 10)
    }
}

// The engine side of the comparison. Until RealmStorage exposes its object
// API this is a stub: `setUp` throws, and the harness runs SQLite alone and
// prints "n/a" for the engine. To wire the engine in, replace the bodies
// below (see docs/PERFORMANCE.md, "Adding the engine side"); nothing else in
// realm-bench needs to change.

import RealmStorage

struct EngineNotImplemented: Error, CustomStringConvertible {
    var description: String { "engine target not implemented yet" }
}

final class EngineTarget: BenchTarget {
    let name = "engine"

    func setUp(directory: String) throws { throw EngineNotImplemented() }
    func insertAll(_ people: [Person]) throws -> Int { throw EngineNotImplemented() }
    func insertOneByOne(_ people: [Person]) throws -> Int { throw EngineNotImplemented() }
    func countAge(in range: ClosedRange<Int>) throws -> Int { throw EngineNotImplemented() }
    func sumAge(in range: ClosedRange<Int>) throws -> Int { throw EngineNotImplemented() }
    func lookupNames(_ names: [String]) throws -> Int { throw EngineNotImplemented() }
    func countCity(_ city: String) throws -> Int { throw EngineNotImplemented() }
    func lookupAges(ids: [Int]) throws -> Int { throw EngineNotImplemented() }
    func iterateAll() throws -> Int { throw EngineNotImplemented() }
    func incrementAllAges() throws -> Int { throw EngineNotImplemented() }
    func deleteAll() throws -> Int { throw EngineNotImplemented() }
    func fileSize() throws -> Int { throw EngineNotImplemented() }
    func tearDown() {}
}

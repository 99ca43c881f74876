import Foundation
import Testing
@testable import RealmDB
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A node of a class that fails its checksum is never read as a deleted object, no object or an empty list:
/// the calls without an error channel stop the process with the engine's error (naming the file, the page and
/// the class), and notification blocks receive `.error`.
@Suite struct DamagedFileTests {
    static let people = 300

    /// A file of `people` people (ids 0..<300, names `n0.` ...), each with a dog (`d0` ...) that is the only
    /// element of its owner's `dogs`, then a later commit, so the first cluster of Person belongs to an older
    /// commit than the newest; closed.
    static func make(_ dir: TempDir) throws -> Realm.Configuration {
        let config = fileConfig(dir, [Dog.self, Person.self])
        try withRealm(config) { r in
            try r.write {
                for i in 0..<people {
                    let p = r.create(Person.self, value: ["id": i, "name": "n\(i)."])
                    let d = r.create(Dog.self, value: ["name": "d\(i)", "owner": p])
                    p.dogs.append(d)
                }
            }
            try r.write { r.create(Person.self, value: ["id": 1_000, "name": "later"]) }
        }
        return config
    }

    /// The page of the cluster (node type 2) whose bytes hold `marker`.
    static func clusterPage(_ path: String, holding marker: String) throws -> Int {
        let bytes = [UInt8](try #require(FileManager.default.contents(atPath: path)))
        let m = Array(marker.utf8)
        return try #require((2..<bytes.count / 4096).first { p in
            let o = p * 4096
            let length = Int(bytes[o + 4]) | Int(bytes[o + 5]) << 8 | Int(bytes[o + 6]) << 16
            guard bytes[o] == 2, length > 16, o + length <= bytes.count else { return false }
            return (o..<o + length - m.count).contains { bytes[$0..<$0 + m.count].elementsEqual(m) }
        }, "no cluster holds \(marker)")
    }

    /// XORs one byte of page `page` in place (the file stays the same inode, so an open mapping sees it).
    static func flip(_ path: String, page: Int, offset: Int) throws {
        let fd = open(path, O_RDWR)
        try #require(fd >= 0)
        defer { close(fd) }
        var byte: UInt8 = 0
        let at = off_t(page * 4096 + offset)
        try #require(pread(fd, &byte, 1, at) == 1)
        byte ^= 0x5A
        try #require(pwrite(fd, &byte, 1, at) == 1)
    }

    /// A damaged copy of `make`'s file: a byte inside the Person cluster holding person 17. Returns the file
    /// and the damaged page.
    static func damagedFile(_ dir: TempDir) throws -> (path: String, page: Int) {
        let config = try make(dir)
        let path = config.fileURL!.path
        let page = try clusterPage(path, holding: "n17.")
        try flip(path, page: page, offset: 200)
        return (path, page)
    }

    /// Opens the damaged file; the person 17 reached through its dog's link, whose own cluster is intact.
    static func ownerOfDog17(_ path: String) -> (Realm, Person) {
        let realm = try! Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Dog.self, Person.self]))
        let dog = realm.objects(Dog.self).filter("name == 'd17'").first!
        return (realm, dog.owner!)
    }

    /// Prints what the call answered, in a child that answers instead of stopping.
    static func answer(_ text: String) {
        FileHandle.standardError.write(Data("answered \(text)\n".utf8))
    }

    /// Checks that the child stopped with the engine's error for `page` of Person instead of answering.
    static func expectStoppedWithCorruptPerson(_ result: ExitTest.Result?, page: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("corrupt") && stderr.contains("page \(page)") && stderr.contains("Person")
                && stderr.contains("fails its checksum"), "\(stderr)", sourceLocation: sourceLocation)
    }

    @Test func isInvalidatedOfAnObjectInADamagedNodeStopsInsteadOfSayingDeleted() async throws {
        let dir = TempDir()
        let (path, page) = try Self.damagedFile(dir)
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = path as String] in
            let (_, person) = Self.ownerOfDog17(path)
            Self.answer("isInvalidated: \(person.isInvalidated)")
        }
        Self.expectStoppedWithCorruptPerson(result, page: page)
    }

    @Test func readingAPropertyInADamagedNodeStopsNamingTheProperty() async throws {
        let dir = TempDir()
        let (path, page) = try Self.damagedFile(dir)
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = path as String] in
            let (_, person) = Self.ownerOfDog17(path)
            Self.answer("name: \(person.name)")
        }
        Self.expectStoppedWithCorruptPerson(result, page: page)
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("cannot read Person.name in ") || stderr.contains("cannot read Person.name: "), "\(stderr)")
    }

    @Test func objectForPrimaryKeyInADamagedNodeStopsInsteadOfReturningNil() async throws {
        let dir = TempDir()
        let (path, page) = try Self.damagedFile(dir)
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = path as String] in
            let realm = try! Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Dog.self, Person.self]))
            Self.answer("object: \(String(describing: realm.object(ofType: Person.self, forPrimaryKey: 17)))")
        }
        Self.expectStoppedWithCorruptPerson(result, page: page)
    }

    @Test func dynamicObjectForPrimaryKeyInADamagedNodeStopsInsteadOfReturningNil() async throws {
        let dir = TempDir()
        let (path, page) = try Self.damagedFile(dir)
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = path as String] in
            let realm = try! Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Dog.self, Person.self]))
            Self.answer("object: \(String(describing: realm.dynamicObject(ofType: "Person", forPrimaryKey: 17)))")
        }
        Self.expectStoppedWithCorruptPerson(result, page: page)
    }

    @Test func resultsOverAListOfAnObjectInADamagedNodeStopInsteadOfBeingEmpty() async throws {
        let dir = TempDir()
        let (path, page) = try Self.damagedFile(dir)
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = path as String] in
            let (_, person) = Self.ownerOfDog17(path)
            Self.answer("dogs: \(person.dogs.filter("name != ''").count)")
        }
        Self.expectStoppedWithCorruptPerson(result, page: page)
    }

    @Test func resolvingAReferenceToAnObjectInADamagedNodeStopsInsteadOfReturningNil() async throws {
        let dir = TempDir()
        let (path, page) = try Self.damagedFile(dir)
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = path as String] in
            let (_, person) = Self.ownerOfDog17(path)
            let ref = ThreadSafeReference(to: person)
            nonisolated(unsafe) var resolved = "not run"
            onOtherThread {
                let realm = try! Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Dog.self, Person.self]))
                resolved = String(describing: realm.resolve(ref))
            }
            Self.answer("resolved: \(resolved)")
        }
        Self.expectStoppedWithCorruptPerson(result, page: page)
    }

    /// Observing results that cannot be evaluated delivers `.error` (not `.initial`), and nothing after it.
    @Test func observingResultsThatCannotBeReadDeliversTheError() throws {
        let dir = TempDir()
        let (path, page) = try Self.damagedFile(dir)
        let realm = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Dog.self, Person.self]))
        var changes: [String] = []
        let token = realm.objects(Person.self).observe { change in
            switch change {
            case .initial(let r): changes.append("initial \(r.count)")
            case .update: changes.append("update")
            case .error(let e): changes.append("error \(e)")
            }
        }
        #expect(changes.count == 1 && changes.first?.hasPrefix("error") == true, "\(changes)")
        #expect(changes.first?.contains("page \(page)") == true && changes.first?.contains("Person") == true, "\(changes)")
        try realm.write { realm.create(Person.self, value: ["id": 2_000, "name": "n-new"]) }
        #expect(changes.count == 1, "\(changes)")
        token.invalidate()
    }

    /// Observers whose next delivery must read a damaged node (the version they are brought from) receive
    /// `.error` once, and nothing after it; before, the change was dropped without a word.
    @Test func observersReceiveTheErrorWhenTheChangesCannotBeRead() throws {
        let dir = TempDir()
        let config = try Self.make(dir)
        let realm = try Realm(configuration: config)
        let person = try #require(realm.object(ofType: Person.self, forPrimaryKey: 17))
        var objectChanges: [String] = []
        var resultsChanges: [String] = []
        let objectToken = person.observe { (change: ObjectChange<Person>) in
            switch change {
            case .change(_, let props): objectChanges.append("change \(props.map(\.name))")
            case .deleted: objectChanges.append("deleted")
            case .error(let e): objectChanges.append("error \(e)")
            }
        }
        let resultsToken = realm.objects(Person.self).filter("name BEGINSWITH 'n'").observe { change in
            switch change {
            case .initial: resultsChanges.append("initial")
            case .update(_, let d, let i, let m): resultsChanges.append("update \(d) \(i) \(m)")
            case .error(let e): resultsChanges.append("error \(e)")
            }
        }
        // Another thread renames person 17: its cluster is copied, and this Realm's version still holds the old one.
        onOtherThread {
            let w = try! Realm(configuration: config)
            try! w.write { w.object(ofType: Person.self, forPrimaryKey: 17)!.name = "renamed" }
        }
        // This process has read (and checked) the old cluster; damage its stored checksum so it is checked again.
        let page = try Self.clusterPage(config.fileURL!.path, holding: "n17.")
        try Self.flip(config.fileURL!.path, page: page, offset: 8)
        #expect(realm.refresh())
        #expect(objectChanges.count == 1 && objectChanges.first?.hasPrefix("error") == true, "\(objectChanges)")
        #expect(objectChanges.first?.contains("page \(page)") == true, "\(objectChanges)")
        #expect(resultsChanges.count == 2 && resultsChanges.last?.hasPrefix("error") == true, "\(resultsChanges)")
        // Delivery stopped: later changes are not reported to these observers.
        try realm.write { realm.create(Person.self, value: ["id": 2_000, "name": "n-new"]) }
        #expect(objectChanges.count == 1, "\(objectChanges)")
        #expect(resultsChanges.count == 2, "\(resultsChanges)")
        objectToken.invalidate()
        resultsToken.invalidate()
    }
}

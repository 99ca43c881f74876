import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// Opening a file while another opener changes it: between opening the data file and taking the lock file,
/// another process compacts the database (renaming a new file over the path) or creates the file. The
/// interleaving is made deterministic with `Database.afterOpeningFileForTesting`: the other opener runs there,
/// in this process, as a second `Database` (its own lock file description), as another process would.
@Suite(.serialized) struct OpenRaceTests {
    /// Holds what the interleaved opener leaves open (a class, so the hook can set it).
    final class Kept { var database: Database? }

    /// Runs `body` once, when the next open of `path` has opened the data file and not yet the lock file.
    static func whenOpening(_ path: String, _ body: @escaping () throws -> Void) {
        Database.registryLock.withLock {
            Database.afterOpeningFileForTesting = { opened in
                guard opened == path else { return }
                Database.afterOpeningFileForTesting = nil
                do { try body() } catch { Issue.record("the interleaved opener failed: \(error)") }
            }
        }
    }

    static func clearHook() { Database.registryLock.withLock { Database.afterOpeningFileForTesting = nil } }

    func dogNames(_ db: Database) throws -> [String] {
        try db.read { s in
            let t = try s.table("Dog"), name = try s.property(t, "name")
            return try s.keys(t).map { k -> String in
                if case .string(let n) = try s.value(k, name) { return n }
                return "?"
            }.sorted()
        }
    }

    func addDog(_ db: Database, _ name: String) throws {
        try db.write { tx in _ = try tx.createObject("Dog", ["name": .string(name)]) }
    }

    /// A process that opened the file just before another compacted it went on with the old, unlinked file:
    /// its commits were lost. `compactorStaysOpen`: the other process keeps the database open (this opener is
    /// not the first); otherwise it has closed it (this opener is the first, and recovers the new file).
    @Test(arguments: [false, true]) func openingWhileAnotherCompactsUsesTheNewFile(compactorStaysOpen: Bool) throws {
        defer { Self.clearHook() }
        let dir = TempDir()
        let path = dir.file("a.realm")
        do {
            let db = try personDogDatabase(in: dir)
            try addDog(db, "before")
        }
        let compactor = Kept()
        Self.whenOpening(path) {
            let other = try Database.open(path: path)
            try other.compact()
            if compactorStaysOpen { compactor.database = other }
        }
        do {
            let db = try Database.open(path: path)
            // (The two `Database`s of one process share its fcntl locks: the other goes before this one writes.)
            compactor.database = nil
            try addDog(db, "after")
            #expect(try dogNames(db) == ["after", "before"])
        }
        let db = try Database.open(path: path)
        #expect(try dogNames(db) == ["after", "before"])
        #expect(try db.verify().isOK)
    }

    /// Two openers of a new encrypted file: the second looked at the file while it was still empty and made a
    /// cipher with a salt of its own; the first then created the file with its salt. The second failed with
    /// "neither meta slot is valid" (it decrypted with the wrong salt).
    @Test(arguments: [false, true]) func openingANewEncryptedFileAnotherCreatesMeanwhile(creatorStaysOpen: Bool) throws {
        defer { Self.clearHook() }
        let dir = TempDir()
        let path = dir.file("e.realm")
        let options = DatabaseOptions(encryptionKey: (0..<64).map { UInt8($0) })
        let creator = Kept()
        Self.whenOpening(path) {
            let other = try Database.open(path: path, options: options)
            try other.write { tx in try tx.createClasses(personDogSchema) }
            try addDog(other, "first")
            if creatorStaysOpen { creator.database = other }
        }
        do {
            let db = try Database.open(path: path, options: options)
            creator.database = nil
            try addDog(db, "second")
            #expect(try dogNames(db) == ["first", "second"])
        }
        let db = try Database.open(path: path, options: options)
        #expect(try dogNames(db) == ["first", "second"])
        #expect(try db.verify().isOK)
    }

    /// The same without a key: the file turns out encrypted, which is what the error says.
    @Test func openingWithoutAKeyAFileAnotherCreatesEncryptedMeanwhile() throws {
        defer { Self.clearHook() }
        let dir = TempDir()
        let path = dir.file("e.realm")
        Self.whenOpening(path) {
            let other = try Database.open(path: path, options: DatabaseOptions(encryptionKey: (0..<64).map { UInt8($0) }))
            try other.write { tx in try tx.createClasses(personDogSchema) }
        }
        let e = ErrorTestKit.storageError { _ = try Database.open(path: path) }
        #expect(e == .encryptionKeyRequired(path: path))
    }
}

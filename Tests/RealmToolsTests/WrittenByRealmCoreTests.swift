import Foundation
import RealmCoreFile
import RealmQuery
import RealmStorage
@testable import RealmTools
import Testing
import TestSupport

/// Files written by Realm Core v14.14.0 itself (`Fixtures/written`, made by `docs/bench/realm_core_writer.cpp`):
/// committed and streaming form, plain and encrypted. Read in place, they answer what Realm Core counted when it
/// wrote them.
@Suite struct WrittenByRealmCoreTests {
    static let directory = CoreFileInfoTests.fixtures + "/written"

    static func key() throws -> [UInt8] {
        let hex = try String(contentsOfFile: directory + "/people-1k-encrypted.key", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return stride(from: 0, to: hex.count, by: 2).map { i in
            UInt8(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 2)], radix: 16)!
        }
    }

    @Test(arguments: [("people-1k.realm", false, false), ("people-1k-copy.realm", false, true),
                      ("people-1k-encrypted.realm", true, false), ("people-1k-encrypted-copy.realm", true, true)])
    func readsWhatRealmCoreWrote(_ name: String, _ encrypted: Bool, _ streaming: Bool) throws {
        let path = Self.directory + "/" + name
        let file = try RealmCoreFile(path: path, key: encrypted ? try Self.key() : nil)
        #expect(file.format == 24 && file.isEncrypted == encrypted && file.isStreaming == streaming)
        #expect(file.schemaVersion == 1)
        let reader = try CoreFileReader(file: file)
        #expect(reader.schema.map(\.name) == ["Person", "Dog"])
        #expect(try reader.count("Person") == 1000 && reader.count("Dog") == 250)
        #expect(try Query.evaluate("age > 50", on: "Person", in: reader).count == 487)
        #expect(try Query.evaluate("city == 'Zürich'", on: "Person", in: reader).count == 4)
        #expect(try Query.evaluate("owner != nil", on: "Dog", in: reader).count == 250)
        var sum: Int64 = 0
        let t = try reader.table("Person"), age = try reader.property(t, "age")
        try reader.scan(t) { leaf in
            let column = try leaf.column(age)
            for i in 0..<leaf.count { sum += column.int(i) }
            return true
        }
        #expect(sum == 49184)
        // Dog i is owned by the person whose id is i × 7919 mod 1000, and is one of that person's backlinks.
        let dogs = try reader.table("Dog"), owner = try reader.property(dogs, "owner"), id = try reader.property(t, "id")
        let dog7 = try #require(try Query.evaluate("name == 'dog-7'", on: "Dog", in: reader).first)
        guard case .link(let person) = try reader.value(dog7, owner) else { Issue.record("dog-7 has no owner"); return }
        #expect(try reader.value(person, id) == .int(7 * 7919 % 1000))
        #expect(try reader.backlinks(person, in: t, from: "Dog", property: "owner").contains(dog7))
    }

    @Test func aWrongKeyIsSaid() throws {
        var key = try Self.key()
        key[0] ^= 1
        #expect(throws: RealmCoreFileError.wrongKey(path: Self.directory + "/people-1k-encrypted-copy.realm")) {
            _ = try RealmCoreFile(path: Self.directory + "/people-1k-encrypted-copy.realm", key: key)
        }
    }
}

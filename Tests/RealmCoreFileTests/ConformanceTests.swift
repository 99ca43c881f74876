import Foundation
@testable import RealmCoreFile
import Testing

/// Every fixture of `Fixtures/` against its README: format, form, tables and row counts,
/// every value and backlink read without an error, and the expected failures' errors.
@Suite struct ConformanceTests {
    @Test func theFixturesAreAllThere() {
        #expect(Fixtures.all.count == 89, "fixtures in \(Fixtures.directory)")
        #expect(Fixtures.inventory.count == 89)
        #expect(Fixtures.observed.count == 89)
    }

    @Test(arguments: Fixtures.all)
    func fixtureMatchesTheOracle(_ name: String) throws {
        let inventory = try #require(Fixtures.inventory[name], "\(name) not in the README's inventory")
        let observed = try #require(Fixtures.observed[name], "\(name) not in the README's tables")
        guard let expected = observed.tables else {
            // An interrupted 9→10 upgrade: a clear error naming it, never a crash or a partial read.
            #expect {
                _ = try Fixtures.open(name)
            } throws: { error in
                guard case let .interruptedUpgrade(format, _, _) = error as? RealmCoreFileError else { return false }
                return format == 9 && "\(error)".contains("half-way through an upgrade from format 9")
            }
            return
        }
        let file = try Fixtures.open(name)
        #expect(file.format == inventory.format)
        #expect(file.isStreaming == inventory.streaming)
        #expect(file.isEncrypted == inventory.encrypted)
        let tables = file.allTables
        #expect(tables.map(\.tableName) == expected.map(\.name))
        #expect(tables.map(\.objectCount) == expected.map(\.rows))
        for (table, e) in zip(tables, expected) {
            #expect(table.isEmbedded == (e.kind == "embedded"), "\(table.tableName)")
            #expect(table.isAsymmetric == (e.kind == "asymmetric"), "\(table.tableName)")
        }
        #expect(try file.readEverything() >= 0)
        // Object keys lead back to their positions (links are followed this way), and keys are unique.
        for table in tables {
            var keys = Set<Int64>()
            for p in 0..<table.objectCount {
                let key = try file.object(of: table, at: p).key
                #expect(keys.insert(key).inserted, "\(table.tableName): key \(key) twice")
                #expect(try file.position(of: table, key: key) == p, "\(table.tableName): key \(key) at \(p)")
            }
            #expect(try file.position(of: table, key: -5) == nil)
        }
        // Every link, in a property or inside a collection, leads to an object of its target class.
        for table in tables {
            for p in 0..<table.objectCount {
                for link in try file.object(of: table, at: p).values.flatMap(\.links) {
                    let target = try #require(file.class(named: link.className), "\(link)")
                    #expect(try file.position(of: target, key: link.key) != nil, "\(table.tableName)[\(p)] → \(link)")
                }
            }
        }
    }

    @Test func anEncryptedFixtureWithoutItsKeyAsksForOne() {
        #expect(throws: RealmCoreFileError.keyRequired(path: Fixtures.path("java/0.98.0-alltypes-default-encrypted.realm"))) {
            _ = try RealmCoreFile(path: Fixtures.path("java/0.98.0-alltypes-default-encrypted.realm"))
        }
    }

    @Test(arguments: ["java/0.90.5-alltypes-default-encrypted.realm", "core/test_shared_decrypt_4k_page.realm",
                      "core/test_upgrade_database_9_to_10_encrypted.realm", "java/6.0.0-beta.2-alltypes-default-encrypted.realm"])
    func aWrongKeyIsAWrongKey(_ name: String) {
        var key = Fixtures.key(name)!
        key[40] ^= 1  // the HMAC half
        #expect(throws: RealmCoreFileError.wrongKey(path: Fixtures.path(name))) { _ = try RealmCoreFile(path: Fixtures.path(name), key: key) }
        var aesKey = Fixtures.key(name)!
        aesKey[3] ^= 1  // the AES half: pages authenticate, the decrypted header does not
        #expect(throws: RealmCoreFileError.wrongKey(path: Fixtures.path(name))) { _ = try RealmCoreFile(path: Fixtures.path(name), key: aesKey) }
    }

    @Test func aKeyOfTheWrongLengthIsRefused() {
        #expect(throws: RealmCoreFileError.badKeyLength(3)) {
            _ = try RealmCoreFile(path: Fixtures.path("java/0.90.5-alltypes-default-encrypted.realm"), key: [1, 2, 3])
        }
    }
}

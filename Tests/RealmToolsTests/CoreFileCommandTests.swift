import Foundation
import Testing
import TestSupport

/// `convert`, `schema`, `export`, `query` and `verify` on Realm Core files, with the real binary: the file is
/// only read.
@Suite struct CoreFileCommandTests {
    static let fixtures = CoreFileInfoTests.fixtures

    /// Copies a fixture into `dir` as `name`.
    func copy(_ fixture: String, _ dir: TempDir, _ name: String) throws {
        try FileManager.default.copyItem(atPath: Self.fixtures + "/" + fixture, toPath: dir.file(name))
    }

    /// The bytes and modification time of a file.
    func state(_ path: String) throws -> (Data, Date) {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let mtime = try #require(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
        return (data, mtime)
    }

    @Test func convertWritesAVerifiedCopyAndLeavesTheOriginalAlone() throws {
        let dir = TempDir()
        try copy("java/0.98.0-alltypes.realm", dir, "app.realm")
        let before = try state(dir.file("app.realm"))
        let run = try cli(dir, "convert", "app.realm", "copy.realm")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Realm Core file, format 3"), "\(run.stdout)")
        #expect(run.stdout.contains("; no problems") && run.stdout.contains("verified in"))
        #expect(run.stdout.contains("  IOSAllTypes  10") && run.stdout.contains("  IOSChild  110"), "\(run.stdout)")
        let after = try state(dir.file("app.realm"))
        #expect(after.0 == before.0 && after.1 == before.1)
        #expect(!FileManager.default.fileExists(atPath: dir.file("app.realm.lock")))
        // The copy is a file of our format: the ordinary commands read it.
        let count = try cli(dir, "query", "copy.realm", "IOSChild", "TRUEPREDICATE", "--format", "count")
        #expect(count.status == 0 && count.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "110", "\(count.stdout)\(count.stderr)")
        let verify = try cli(dir, "verify", "copy.realm")
        #expect(verify.status == 0 && verify.stdout.contains("no problems"), "\(verify.stdout)")
        // An existing output is replaced only with --force.
        let again = try cli(dir, "convert", "app.realm", "copy.realm")
        #expect(again.status == 1 && again.stderr.contains("--force"), "\(again.stderr)")
        let forced = try cli(dir, "convert", "app.realm", "copy.realm", "--force")
        #expect(forced.status == 0, "\(forced.stderr)")
        let onto = try cli(dir, "convert", "app.realm", "app.realm", "--force")
        #expect(onto.status == 1 && onto.stderr.contains("is the input file"), "\(onto.stderr)")
        #expect(try state(dir.file("app.realm")).0 == before.0)
    }

    @Test func convertAnEncryptedFileWithItsKey() throws {
        let dir = TempDir()
        try copy("java/0.98.0-alltypes-default-encrypted.realm", dir, "e.realm")
        let key = String(repeating: "01", count: 64)
        let run = try cli(dir, "convert", "e.realm", "copy.realm", "--key", key)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("  IOSAllTypes  1"), "\(run.stdout)")
        let wrong = try cli(dir, "convert", "e.realm", "other.realm", "--key", String(repeating: "02", count: 64))
        #expect(wrong.status == 1 && wrong.stderr.contains("wrong key"), "\(wrong.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("other.realm")))
        let none = try cli(dir, "convert", "e.realm", "other.realm")
        #expect(none.status == 1 && none.stderr.contains("key"), "\(none.stderr)")
        // The read-only commands, given no key, say that a key may open it.
        for sub in ["info", "schema", "verify"] {
            let keyless = try cli(dir, sub, "e.realm")
            #expect(keyless.status == 1 && keyless.stderr.contains("encrypted Realm Core file") && keyless.stderr.contains("--key"),
                    "\(sub): \(keyless.stderr)")
        }
        let info = try cli(dir, "info", "e.realm", "--key", key)
        #expect(info.status == 0 && info.stdout.contains("IOSAllTypes"), "\(info.stderr)")
        // One object, one class: in the singular.
        let verify = try cli(dir, "verify", "e.realm", "--key", key)
        #expect(verify.status == 0 && verify.stdout.contains("converted copy: 1 object\n"), "\(verify.stdout)")
        #expect(run.stdout.contains(": 2 classes, 1 object, converted in"), "\(run.stdout)")
        // Given a key that is not the file's, they say so, as `convert` and the browser do.
        for sub in ["info", "schema", "verify", "export"] {
            let wrongKey = try cli(dir, sub, "e.realm", "--key", String(repeating: "02", count: 64))
            #expect(wrongKey.status == 1 && wrongKey.stderr.contains("wrong key"), "\(sub): \(wrongKey.stderr)")
        }
    }

    @Test func convertRefusesAnInterruptedUpgradeAndOurOwnFiles() throws {
        let dir = TempDir()
        try copy("core/test_upgrade_progress_3.realm", dir, "p.realm")
        let run = try cli(dir, "convert", "p.realm", "copy.realm")
        #expect(run.status == 1 && run.stderr.contains("half-way through an upgrade from format 9"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("copy.realm")))
        #expect(try cli(dir, "demo", "d.realm", "--objects", "50").status == 0)
        let ours = try cli(dir, "convert", "d.realm", "copy.realm")
        #expect(ours.status == 1 && ours.stderr.contains("already a file of this format"), "\(ours.stderr)")
        // One of our encrypted files, with its key: ours, not a Realm Core file with a wrong key.
        let key = String(repeating: "3c", count: 64)
        #expect(try cli(dir, "demo", "e.realm", "--objects", "50", "--key", key).status == 0)
        let encrypted = try cli(dir, "convert", "e.realm", "copy.realm", "--key", key)
        #expect(encrypted.status == 1 && encrypted.stderr.contains("already a file of this format (encrypted)"), "\(encrypted.stderr)")
    }

    @Test func schemaExportQueryAndVerifyReadARealmCoreFile() throws {
        let dir = TempDir()
        try copy("java/0.98.0-alltypes.realm", dir, "app.realm")
        let before = try state(dir.file("app.realm"))
        let schema = try cli(dir, "schema", "app.realm")
        #expect(schema.status == 0, "\(schema.stderr)")
        #expect(schema.stdout.contains("IOSAllTypes") && schema.stdout.contains("IOSChild") && !schema.stdout.contains("metadata"), "\(schema.stdout)")
        let json = try cli(dir, "schema", "app.realm", "--format", "json")
        #expect(json.status == 0 && json.stdout.contains("\"IOSAllTypes\""), "\(json.stderr)")
        let swift = try cli(dir, "schema", "app.realm", "--format", "swift")
        #expect(swift.status == 0 && swift.stdout.contains("class IOSAllTypes"), "\(swift.stdout)")
        let export = try cli(dir, "export", "app.realm")
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains("\"IOSAllTypes\"") && export.stdout.contains("\"IOSChild\""))
        let csv = try cli(dir, "export", "app.realm", "--format", "csv", "--output", "out")
        #expect(csv.status == 0, "\(csv.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.file("out/IOSChild.csv")))
        let query = try cli(dir, "query", "app.realm", "IOSChild", "TRUEPREDICATE", "--format", "count")
        #expect(query.status == 0 && query.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "110", "\(query.stdout)\(query.stderr)")
        let bad = try cli(dir, "query", "app.realm", "IOSChild", "nosuch == 1")
        #expect(bad.status == 1 && bad.stderr.contains("invalid query"), "\(bad.stderr)")
        let verify = try cli(dir, "verify", "app.realm")
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains("Realm Core file, format 3") && verify.stdout.contains("no problems found"), "\(verify.stdout)")
        let after = try state(dir.file("app.realm"))
        #expect(after.0 == before.0 && after.1 == before.1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["app.realm", "out"])
    }

    @Test func aFileOfRealmCoreTablesWithoutClassesIsQueriedByItsTables() throws {
        let dir = TempDir()
        try copy("core/test_upgrade_database_4_24.realm", dir, "t.realm")
        let query = try cli(dir, "query", "t.realm", "table", "TRUEPREDICATE", "--format", "count")
        #expect(query.status == 0 && query.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "41", "\(query.stdout)\(query.stderr)")
    }

    /// Every fixture the reader opens is exported, as JSON and as CSV, and left as it was. The `alltypes-min` and
    /// `-max` files of realm-java's tests hold dates of ±2^63 seconds, whose text overflowed and stopped the
    /// program.
    @Test(arguments: CoreConversionTests.all.filter { !CoreConversionTests.refused.contains($0) })
    func everyReadableFixtureIsExported(_ name: String) throws {
        let dir = TempDir()
        try copy(name, dir, "app.realm")
        let before = try state(dir.file("app.realm"))
        let key = CoreConversionTests.key(name).map { ["--key", $0.map { String(format: "%02x", $0) }.joined()] } ?? []
        let json = try cli(dir, ["export", "app.realm"] + key)
        #expect(json.status == 0, "\(name): \(json.stderr)")
        let csv = try cli(dir, ["export", "app.realm", "--format", "csv", "--output", "out"] + key)
        #expect(csv.status == 0, "\(name): \(csv.stderr)")
        let after = try state(dir.file("app.realm"))
        #expect(after.0 == before.0 && after.1 == before.1, "\(name)")
        let dates: [String: String] = [
            "java/0.98.0-alltypes-min.realm": "\"dateCol\": \"-292277022657-01-27T08:29:52Z\"",
            "java/0.98.0-alltypes-max.realm": "\"dateCol\": \"-292277022657-01-27T08:29:52Z\"",
            "java/6.0.0-beta.2-alltypes-min.realm": "\"dateCol\": \"-292277022657-01-27T08:29:51.000000001Z\"",
            "java/6.0.0-beta.2-alltypes-max.realm": "\"dateCol\": \"+292277026596-12-04T15:30:07.999999999Z\"",
        ]
        if let date = dates[name] { #expect(json.stdout.contains(date), "\(name): \(json.stdout)") }
    }
}

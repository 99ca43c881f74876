import Foundation
import Testing
import RealmStorage
@testable import RealmTools
import TestSupport

/// Runs `realm-browser` with arguments in `dir`.
func cli(_ dir: TempDir, _ args: String...) throws -> ProcessResult {
    try cli(dir, args)
}

func cli(_ dir: TempDir, _ args: [String]) throws -> ProcessResult {
    try runProcess(try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER"), args, in: dir.path)
}

func write(_ dir: TempDir, _ name: String, _ text: String) {
    _ = FileManager.default.createFile(atPath: dir.file(name), contents: Data(text.utf8))
}

let peopleSchema = """
[
  {"name": "Person", "primaryKey": "id", "properties": {
     "id": "int", "name": {"type": "string", "indexed": true}, "age": "int?", "tags": "string[]",
     "dogs": "Dog[]", "best": "Dog", "born": "date?"}},
  {"name": "Dog", "properties": {
     "name": "string", "owners": {"type": "linkingObjects", "objectType": "Person", "property": "dogs"}}}
]
"""

@Suite struct CommandLineTests {
    @Test func demoInfoSchemaVerify() throws {
        let dir = TempDir()
        let demo = try cli(dir, "demo", "d.realm", "--objects", "700", "--seed", "7")
        #expect(demo.status == 0, "\(demo.stderr)")
        let info = try cli(dir, "info", "d.realm")
        #expect(info.status == 0)
        #expect(info.stdout.contains("Person") && info.stdout.contains("AllTypes") && info.stdout.contains("schema version"))
        let schema = try cli(dir, "schema", "d.realm")
        #expect(schema.stdout.contains("owners      ← Person.dogs"))
        let swift = try cli(dir, "schema", "d.realm", "--format", "swift")
        #expect(swift.stdout.contains("@Persisted(primaryKey: true) var id: Int = 0"))
        #expect(swift.stdout.contains("@Persisted(originProperty: \"dogs\") var owners: LinkingObjects<Person>"))
        for sub in ["info", "schema", "export", "verify"] {
            #expect(try cli(dir, sub, "d.realm", "--read-only").status == 0, "\(sub) --read-only")
        }
        let verify = try cli(dir, "verify", "d.realm")
        #expect(verify.status == 0 && verify.stdout.contains("no problems"))
        // Deterministic for a seed.
        _ = try cli(dir, "demo", "e.realm", "--objects", "700", "--seed", "7")
        let a = try cli(dir, "export", "d.realm"), b = try cli(dir, "export", "e.realm")
        #expect(a.stdout == b.stdout && !a.stdout.isEmpty)
        // An existing file is not replaced without --force.
        let again = try cli(dir, "demo", "d.realm")
        #expect(again.status == 1 && again.stderr.contains("--force"))
        #expect(try cli(dir, "demo", "d.realm", "--objects", "50", "--force").status == 0)
    }

    /// A file of format 2 (written by the build before backlink trees): the read-only commands say how to
    /// upgrade it, `upgrade` does, and then they read it.
    @Test func olderFormatFileIsUpgradedByTheUpgradeCommand() throws {
        let dir = TempDir()
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../RealmStorageTests/Fixtures/format2-backlinks.realm").standardized.path
        try FileManager.default.copyItem(atPath: fixture, toPath: dir.file("old.realm"))
        let refused = try cli(dir, "info", "old.realm")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("file format 2") && refused.stderr.contains("realm-browser upgrade old.realm"), "\(refused.stderr)")
        let upgrade = try cli(dir, "upgrade", "old.realm")
        #expect(upgrade.status == 0, "\(upgrade.stderr)")
        #expect(upgrade.stdout.contains("upgraded from file format 2 to \(Database.fileFormatVersion)"), "\(upgrade.stdout)")
        let again = try cli(dir, "upgrade", "old.realm")
        #expect(again.status == 0 && again.stdout.contains("nothing to upgrade"), "\(again.stdout)")
        let query = try cli(dir, "query", "old.realm", "Dog", "owner.name == 'p0 名前'", "--format", "count")
        #expect(query.status == 0, "\(query.stderr)")
        #expect((Int(query.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 2990, "person 0 alone is the owner of 2,990 dogs: \(query.stdout)")
        let verify = try cli(dir, "verify", "old.realm")
        #expect(verify.status == 0 && verify.stdout.contains("no problems"), "\(verify.stdout)")
    }

    /// A file of format 5 (node checksums without their pages): read-only commands read it and `info` names
    /// the upgrade; `upgrade` rewrites it as format 6, and the same objects are exported.
    @Test func formatFiveFileIsReadAndUpgradedByTheUpgradeCommand() throws {
        let dir = TempDir()
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../RealmStorageTests/Fixtures/format5-demo.realm").standardized.path
        try FileManager.default.copyItem(atPath: fixture, toPath: dir.file("five.realm"))
        let info = try cli(dir, "info", "five.realm")
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("format          5 (") && info.stdout.contains("realm-browser upgrade"), "\(info.stdout)")
        let before = try cli(dir, "export", "five.realm", "--read-only")
        #expect(before.status == 0 && !before.stdout.isEmpty, "\(before.stderr)")
        let upgrade = try cli(dir, "upgrade", "five.realm")
        #expect(upgrade.status == 0, "\(upgrade.stderr)")
        #expect(upgrade.stdout.contains("upgraded from file format 5 to \(Database.fileFormatVersion)"), "\(upgrade.stdout)")
        let after = try cli(dir, "info", "five.realm")
        #expect(after.stdout.contains("format          \(Database.fileFormatVersion)\n"), "\(after.stdout)")
        #expect(try cli(dir, "export", "five.realm", "--read-only").stdout == before.stdout)
        let verify = try cli(dir, "verify", "five.realm")
        #expect(verify.status == 0 && verify.stdout.contains("no problems"), "\(verify.stdout)")
    }

    @Test func exportImportExportIsByteIdentical() throws {
        let dir = TempDir()
        #expect(try cli(dir, "demo", "a.realm", "--objects", "1500").status == 0)
        let schema = try cli(dir, "schema", "a.realm", "--format", "json")
        write(dir, "schema.json", schema.stdout)
        #expect(try cli(dir, "export", "a.realm", "--output", "a.json").status == 0)
        let imp = try cli(dir, "import", "b.realm", "a.json", "--schema", "schema.json")
        #expect(imp.status == 0, "\(imp.stderr)")
        #expect(try cli(dir, "export", "b.realm", "--output", "b.json").status == 0)
        let a = FileManager.default.contents(atPath: dir.file("a.json"))!
        let b = FileManager.default.contents(atPath: dir.file("b.json"))!
        // Compared first, then expected: a failed `#expect(a == b)` on megabytes of JSON has the test library
        // compute a diff of the two that runs for many minutes.
        let same = a == b
        #expect(same, "the exports differ: \(a.count) and \(b.count) bytes, first at byte \(zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count))")
        #expect(try cli(dir, "schema", "b.realm", "--format", "json").stdout == schema.stdout)
        #expect(try cli(dir, "verify", "b.realm").status == 0)
    }

    @Test func importWithLinksByPrimaryKeyNestedAndIndex() throws {
        let dir = TempDir()
        write(dir, "schema.json", peopleSchema)
        write(dir, "data.json", """
        {"Person": [
           {"id": 1, "name": "Ann", "tags": ["a"], "dogs": [{"$index": 0}, {"name": "Nested"}], "best": {"$class": "Dog", "$index": 1}, "born": "1969-07-20T20:17:40.5Z"},
           {"id": 2, "name": "李娜", "age": 30}
         ],
         "Dog": [{"name": "Rex"}, {"name": "Fido"}]}
        """)
        let r = try cli(dir, "import", "p.realm", "data.json", "--schema", "schema.json")
        #expect(r.status == 0, "\(r.stderr)")
        let db = try Database.open(path: dir.file("p.realm"), options: DatabaseOptions(readOnly: true))
        try db.read { s in
            let people = try s.table("Person")
            let ann = try #require(try s.object(people, primaryKey: .int(1)))
            let dogs = try s.list(ann, s.property(people, "dogs"))
            #expect(dogs.count == 2)
            let dogT = try s.table("Dog")
            let names = try dogs.map { v -> Value in
                guard case .link(let k) = v else { return .null }
                return try s.value(k, s.property(dogT, "name"))
            }
            #expect(names == [.string("Rex"), .string("Nested")])
            #expect(try s.count("Dog") == 3)
            guard case .date(let t) = try s.value(ann, s.property(people, "born")) else { Issue.record("no date"); return }
            #expect(t.seconds == -14_182_940 + 1 && t.nanoseconds == -500_000_000)
            let li = try #require(try s.object(people, primaryKey: .int(2)))
            #expect(try s.value(li, s.property(people, "name")) == .string("李娜"))
            #expect(try s.value(li, s.property(people, "born")) == .null)
        }
    }

    @Test func badDataAtObjectThreeOfFiveWritesNothing() throws {
        let dir = TempDir()
        write(dir, "schema.json", peopleSchema)
        write(dir, "ok.json", #"{"Person": [{"id": 100, "name": "Keep"}]}"#)
        #expect(try cli(dir, "import", "p.realm", "ok.json", "--schema", "schema.json").status == 0)
        write(dir, "bad.json", """
        {"Person": [{"id": 1, "name": "A"}, {"id": 2, "name": "B"}, {"id": 3, "name": "C"},
                    {"id": 4, "name": "D", "age": "forty"}, {"id": 5, "name": "E"}]}
        """)
        let r = try cli(dir, "import", "p.realm", "bad.json")
        #expect(r.status == 1)
        #expect(r.stderr.contains("bad.json: Person[3].age: expected an integer, found a string"), "\(r.stderr)")
        let db = try Database.open(path: dir.file("p.realm"), options: DatabaseOptions(readOnly: true))
        #expect(try db.read { try $0.count("Person") } == 1)
    }

    @Test(arguments: [
        (#"{"Person": [{"id": 1, "nmae": "x"}]}"#, "Person[0].nmae: no such property (did you mean 'name'?)"),
        (#"{"Cat": []}"#, "Cat: no such class"),
        (#"{"Person": [{"id": 1}, {"id": 1}]}"#, "Person[1].id: duplicate primary key"),
        (#"{"Person": [{"id": 1, "best": 7}]}"#, "Person[0].best: Dog has no primary key"),
        (#"{"Person": [{"id": 1, "born": "yesterday"}]}"#, "Person[0].born: 'yesterday' is not an ISO-8601 date"),
        (#"{"Person": [{"id": 1,}]}"#, "invalid JSON at line 1, column 22: expected a string key"),
        (#"[1, 2]"#, "expected an object of class names"),
    ])
    func importErrorsNameThePlace(data: String, message: String) throws {
        let dir = TempDir()
        write(dir, "schema.json", peopleSchema)
        write(dir, "data.json", data)
        let r = try cli(dir, "import", "p.realm", "data.json", "--schema", "schema.json")
        #expect(r.status == 1)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test(arguments: [
        (#"{"name": "X"}"#, "expected an array of classes"),
        (#"[{"name": "A", "properties": {"x": "strng"}}]"#, "A.properties.x: unknown type 'strng'"),
        (#"[{"name": "A", "properties": {"x": "String"}}]"#, "did you mean 'string'?"),
        (#"[{"name": "A", "properties": {"x": "B"}}]"#, "refers to class 'B', which the schema does not define"),
        (#"[{"name": "A", "primaryKey": "id", "properties": {"x": "int"}}]"#, "A.primaryKey: names 'id'"),
    ])
    func badSchemasAreClearErrors(schema: String, message: String) throws {
        let dir = TempDir()
        write(dir, "schema.json", schema)
        write(dir, "data.json", "{}")
        let r = try cli(dir, "import", "p.realm", "data.json", "--schema", "schema.json")
        #expect(r.status == 1)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test func conflictingSchemaIsRefused() throws {
        let dir = TempDir()
        write(dir, "schema.json", peopleSchema)
        write(dir, "data.json", "{}")
        #expect(try cli(dir, "import", "p.realm", "data.json", "--schema", "schema.json").status == 0)
        write(dir, "other.json", #"[{"name": "Dog", "properties": {"name": "int"}}]"#)
        let r = try cli(dir, "import", "p.realm", "data.json", "--schema", "other.json")
        #expect(r.status == 1 && r.stderr.contains("class 'Dog' exists with another schema"), "\(r.stderr)")
    }

    @Test func missingAndForeignFilesAndUsage() throws {
        let dir = TempDir()
        for sub in ["info", "verify", "schema", "export", "compact"] {
            let r = try cli(dir, sub, "nope.realm")
            #expect(r.status == 1 && r.stderr.contains("nope.realm: no such file"), "\(sub): \(r.stderr)")
        }
        write(dir, "foreign.realm", String(repeating: "not a database ", count: 500))
        let f = try cli(dir, "info", "foreign.realm")
        #expect(f.status == 1 && f.stderr.contains("foreign.realm: not a database file"), "\(f.stderr)")
        let usage = try cli(dir, "demo", "x.realm", "--objects", "many")
        #expect(usage.status == 2, "\(usage.stderr)")
        let unknown = try cli(dir, "info", "a", "b")
        #expect(unknown.status == 2)
        let key = try cli(dir, "info", "x.realm", "--key", "00")
        #expect(key.status == 1 && !key.stderr.contains(" 00"))
        let help = try cli(dir, "--help")
        #expect(help.status == 0 && help.stdout.contains("SUBCOMMANDS"))
    }

    @Test func exportCSVAndUnknownClass() throws {
        let dir = TempDir()
        write(dir, "schema.json", peopleSchema)
        write(dir, "data.json", #"{"Person": [{"id": 1, "name": "Ann, \"the\" first", "tags": []}, {"id": 2, "name": ""}]}"#)
        #expect(try cli(dir, "import", "p.realm", "data.json", "--schema", "schema.json").status == 0)
        #expect(try cli(dir, "export", "p.realm", "--format", "csv", "--output", "out").status == 0)
        let csv = String(decoding: FileManager.default.contents(atPath: dir.file("out/Person.csv"))!, as: UTF8.self)
        #expect(csv == "id,name,age,tags,dogs,best,born\r\n1,\"Ann, \"\"the\"\" first\",,[],[],,\r\n2,\"\",,[],[],,\r\n")
        let r = try cli(dir, "export", "p.realm", "--class", "Cat")
        #expect(r.status == 1 && r.stderr.contains("no class named 'Cat'"))
    }

    @Test func compactPrintsSizes() throws {
        let dir = TempDir()
        #expect(try cli(dir, "demo", "c.realm", "--objects", "2000").status == 0)
        let r = try cli(dir, "compact", "c.realm")
        #expect(r.status == 0 && r.stdout.contains("c.realm:") && r.stdout.contains("→"), "\(r.stderr)")
        #expect(try cli(dir, "verify", "c.realm").status == 0)
    }
}

@Suite struct CommandLineOtherProcessTests {
    /// `compact` refuses clearly while another process has the file open; `info` counts the versions held.
    @Test func compactRefusesWhileAnotherProcessHoldsTheFile() throws {
        let dir = TempDir()
        write(dir, "schema.json", peopleSchema)
        write(dir, "one.json", #"{"Person": [{"id": 1, "name": "A"}]}"#)
        write(dir, "two.json", #"{"Person": [{"id": 2, "name": "B"}]}"#)
        #expect(try cli(dir, "import", "p.realm", "one.json", "--schema", "schema.json").status == 0)
        let out = dir.file("worker.out")
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        let worker = Process()
        worker.executableURL = URL(fileURLWithPath: try productExecutablePath("realm-storage-worker", environmentVariable: "REALM_STORAGE_WORKER"))
        worker.arguments = ["pin", dir.file("p.realm")]
        worker.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        worker.standardInput = FileHandle.nullDevice
        try worker.run()
        defer {
            // SIGKILL: the child may inherit a signal mask that blocks SIGTERM from the test's thread.
            kill(worker.processIdentifier, SIGKILL)
            worker.waitUntilExit()
        }
        // Wait (up to 30 s) for the worker to say it holds its snapshot.
        var pinned = false
        for _ in 0..<300 where !pinned {
            pinned = String(decoding: FileManager.default.contents(atPath: out) ?? Data(), as: UTF8.self).hasPrefix("pinned")
            if !pinned { usleep(100_000) }
        }
        try #require(pinned)
        #expect(try cli(dir, "import", "p.realm", "two.json").status == 0)
        let info = try cli(dir, "info", "p.realm")
        #expect(info.stdout.contains("versions held   2"), "\(info.stdout)")
        let r = try cli(dir, "compact", "p.realm")
        #expect(r.status == 1)
        #expect(r.stderr.contains("open in another process"), "\(r.stderr)")
        #expect(try cli(dir, "verify", "p.realm").status == 0)
    }
}

@Suite struct QueryCommandTests {
    func setUp() throws -> TempDir {
        let dir = TempDir()
        write(dir, "schema.json", peopleSchema)
        write(dir, "data.json", """
        {"Person": [
           {"id": 1, "name": "Ann", "age": 30, "dogs": [{"$index": 0}]},
           {"id": 2, "name": "李娜", "age": 41},
           {"id": 3, "name": "Bob", "age": null},
           {"id": 4, "name": "Émile 🐶", "age": 25}
         ],
         "Dog": [{"name": "Rex"}]}
        """)
        let r = try cli(dir, "import", "p.realm", "data.json", "--schema", "schema.json")
        #expect(r.status == 0, "\(r.stderr)")
        return dir
    }

    @Test func formats() throws {
        let dir = try setUp()
        let count = try cli(dir, "query", "p.realm", "Person", "age > 26", "--format", "count")
        #expect(count.status == 0 && count.stdout == "2\n", "\(count.stdout)\(count.stderr)")
        let json = try cli(dir, "query", "p.realm", "Person", "age >= $0", "--arg", "30", "--sort", "age:desc", "--format", "json")
        #expect(json.stdout.contains("\"name\": \"李娜\""))
        #expect(json.stdout.range(of: "李娜")!.lowerBound < json.stdout.range(of: "Ann")!.lowerBound)
        let csv = try cli(dir, "query", "p.realm", "Person", "name BEGINSWITH[c] $0", "--arg", "a", "--format", "csv")
        #expect(csv.stdout == "id,name,age,tags,dogs,best,born\r\n1,Ann,30,[],\"[{\"\"$class\"\":\"\"Dog\"\",\"\"$key\"\":0}]\",,\r\n", "\(csv.stdout)")
        let table = try cli(dir, "query", "p.realm", "Person", "TRUEPREDICATE", "--sort", "id", "--limit", "4")
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "\(table.stdout)")
        // Wide characters are measured: right-aligned ages end at the same cell after CJK and emoji names.
        func endCell(_ line: String, _ value: String) -> Int? {
            guard let r = line.range(of: value) else { return nil }
            return TextWidth.of(String(line[..<r.upperBound]))
        }
        let ann = try #require(lines.first { $0.contains("Ann") }), li = try #require(lines.first { $0.contains("李娜") })
        let emile = try #require(lines.first { $0.contains("Émile") })
        #expect(endCell(ann, " 30") == endCell(li, " 41"), "\(table.stdout)")
        #expect(endCell(ann, " 30") == endCell(emile, " 25"), "\(table.stdout)")
        #expect(table.stdout.contains("null"))
        let args = try cli(dir, "query", "p.realm", "Person", "id IN $0", "--arg", "[1, 3]", "--format", "count")
        #expect(args.stdout == "2\n", "\(args.stderr)")
    }

    @Test func errors() throws {
        let dir = try setUp()
        let bad = try cli(dir, "query", "p.realm", "Person", "agee > 3")
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("did you mean 'age'?") || bad.stderr.contains("did you mean `age`?"), "\(bad.stderr)")
        #expect(bad.stderr.contains("  agee > 3\n  ^~~~"), "\(bad.stderr)")
        let mismatch = try cli(dir, "query", "p.realm", "Person", "name > 5")
        #expect(mismatch.status == 1 && mismatch.stderr.contains("column"), "\(mismatch.stderr)")
        // The caret is placed in terminal cells: under the mistake after a CJK string.
        let cjk = try cli(dir, "query", "p.realm", "Person", "name == '李娜' AND agee > 3")
        #expect(cjk.stderr.contains("  name == '李娜' AND agee > 3\n" + String(repeating: " ", count: 2 + 19) + "^~~~"), "\(cjk.stderr)")
        let unknown = try cli(dir, "query", "p.realm", "Cat", "TRUEPREDICATE")
        #expect(unknown.status == 1 && unknown.stderr.contains("no class named 'Cat'"))
        let usage = try cli(dir, "query", "p.realm", "Person", "TRUEPREDICATE", "--limit", "-1")
        #expect(usage.status == 2)
    }
}

@Suite struct VerifyCommandTests {
    /// A damaged page is reported with what and where, and the exit code is 1.
    @Test func verifyReportsDamage() throws {
        let dir = TempDir()
        #expect(try cli(dir, "demo", "v.realm", "--objects", "3000").status == 0)
        let path = dir.file("v.realm")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // Damage a few bytes in every fifth page after the header and meta slots: some are live nodes.
        for page in stride(from: 5, to: bytes.count / 4096, by: 5) {
            for i in 0..<16 { bytes[page * 4096 + 100 + i] ^= 0x5A }
        }
        try bytes.write(to: URL(fileURLWithPath: path))
        let r = try cli(dir, "verify", "v.realm")
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("v.realm"), "\(r.stderr)")
        #expect(r.stderr.contains("page") || r.stderr.contains("checksum") || r.stderr.contains("corrupt"), "\(r.stderr)")
    }
}

/// `--key`, `--key-file`, `REALM_KEY`: encrypted files from the command line.
@Suite struct CommandLineEncryptionTests {
    static let hex = (0..<64).map { String(format: "%02x", ($0 * 5 + 1) & 0xFF) }.joined()

    @Test func demoQueryInfoVerifyCompactAndExportWithAKey() throws {
        let dir = TempDir()
        let demo = try cli(dir, "demo", "e.realm", "--objects", "300", "--key", Self.hex)
        #expect(demo.status == 0, "\(demo.stderr)")
        let raw = try Data(contentsOf: URL(fileURLWithPath: dir.file("e.realm")))
        #expect(raw.prefix(8) == Data("RBDBCRYP".utf8))
        write(dir, "key.txt", Self.hex + "\n")
        let count = try cli(dir, "query", "e.realm", "Person", "TRUEPREDICATE", "--format", "count", "--key-file", "key.txt")
        #expect(count.status == 0 && Int(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > 0, "\(count.stderr)")
        for sub in ["info", "verify", "schema"] {
            let r = try cli(dir, sub, "e.realm", "--key-file", "key.txt")
            #expect(r.status == 0, "\(sub): \(r.stderr)")
        }
        #expect(try cli(dir, "compact", "e.realm", "--key", Self.hex).status == 0)
        #expect(try cli(dir, "verify", "e.realm", "--key", Self.hex).status == 0)
        // Without the key, with a wrong one, with a malformed one: each says what is wrong, never the key.
        let none = try cli(dir, "info", "e.realm")
        #expect(none.status == 1 && none.stderr.contains("encrypted"), "\(none.stderr)")
        // One of ours, known by its header: the flags to give the key, and no guess that it is Realm Core's.
        #expect(none.stderr.contains("--key or --key-file") && !none.stderr.contains("Realm Core"), "\(none.stderr)")
        let wrongHex = String(Self.hex.reversed())
        let wrong = try cli(dir, "info", "e.realm", "--key", wrongHex)
        #expect(wrong.status == 1 && wrong.stderr.contains("invalid key") && !wrong.stderr.contains(wrongHex), "\(wrong.stderr)")
        let short = try cli(dir, "info", "e.realm", "--key", "abcd")
        #expect(short.status == 1 && short.stderr.contains("128 hex digits") && !short.stderr.contains("abcd"), "\(short.stderr)")
        let notHex = try cli(dir, "info", "e.realm", "--key", String(repeating: "zz", count: 64))
        #expect(notHex.status == 1 && notHex.stderr.contains("not a hex key"), "\(notHex.stderr)")
        // A key for a plain file.
        #expect(try cli(dir, "demo", "p.realm", "--objects", "50").status == 0)
        let plain = try cli(dir, "info", "p.realm", "--key", Self.hex)
        #expect(plain.status == 1 && plain.stderr.contains("not encrypted"), "\(plain.stderr)")
    }
}

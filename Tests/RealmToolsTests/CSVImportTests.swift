import Foundation
import Testing
import RealmStorage
@testable import RealmTools
import TestSupport

/// `import` of CSV files, as `export --format csv` writes them: round trips, hand-written edge cases, and
/// errors that name file, line and column and write nothing.
@Suite struct CSVImportTests {
    /// Every file of `dir` (name → bytes).
    func files(_ dir: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
            out[name] = FileManager.default.contents(atPath: "\(dir)/\(name)") ?? Data()
        }
        return out
    }

    /// Where two byte strings first differ, for a message that stays short.
    func firstDifference(_ a: Data, _ b: Data) -> String {
        let at = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        let lo = max(0, at - 60)
        return "\(a.count) and \(b.count) bytes, first difference at \(at): …\(String(decoding: a[lo..<min(a.count, at + 60)], as: UTF8.self))… vs …\(String(decoding: b[lo..<min(b.count, at + 60)], as: UTF8.self))…"
    }

    @Test func demoDatabaseRoundTripsByteIdentical() throws {
        let dir = TempDir()
        #expect(try cli(dir, "demo", "a.realm", "--objects", "300", "--seed", "3").status == 0)
        write(dir, "schema.json", try cli(dir, "schema", "a.realm", "--format", "json").stdout)
        let ea = try cli(dir, "export", "a.realm", "--format", "csv", "--output", "a")
        #expect(ea.status == 0, "\(ea.stderr)")
        let imp = try cli(dir, "import", "b.realm", "a", "--schema", "schema.json")
        #expect(imp.status == 0, "\(imp.stderr)")
        #expect(try cli(dir, "export", "b.realm", "--format", "csv", "--output", "b").status == 0)
        let a = try files(dir.file("a")), b = try files(dir.file("b"))
        #expect(a.keys.sorted() == b.keys.sorted() && a.keys.contains("AllTypes.csv"))
        for (name, bytes) in a.sorted(by: { $0.key < $1.key }) {
            let same = bytes == b[name]
            #expect(same, "\(name): \(firstDifference(bytes, b[name] ?? Data()))")
        }
        // The values themselves, not only their CSV forms: the JSON exports of both files are the same.
        let ja = try cli(dir, "export", "a.realm"), jb = try cli(dir, "export", "b.realm")
        let sameJSON = ja.stdout == jb.stdout
        #expect(sameJSON && !ja.stdout.isEmpty, "\(firstDifference(Data(ja.stdout.utf8), Data(jb.stdout.utf8)))")
        #expect(try cli(dir, "verify", "b.realm").status == 0)
    }

    /// Sets, dictionaries (null values, links), embedded objects and lists of them, mixed values holding links
    /// and nested collections: JSON → database → CSV → database → JSON is the same JSON.
    @Test func collectionTypesRoundTripThroughCSV() throws {
        let dir = TempDir()
        write(dir, "schema.json", CollectionTypesToolTests.schema)
        write(dir, "data.json", CollectionTypesToolTests.data)
        #expect(try cli(dir, "import", "a.realm", "data.json", "--schema", "schema.json").status == 0)
        #expect(try cli(dir, "export", "a.realm", "--format", "csv", "--output", "csv").status == 0)
        let person = String(decoding: try #require(FileManager.default.contents(atPath: dir.file("csv/Person.csv"))), as: UTF8.self)
        #expect(person.contains("\"{\"\"city\"\":\"\"Tokyo\"\",\"\"street\"\":\"\"1-1\"\"}\""), "an embedded object is its JSON: \(person)")
        let imp = try cli(dir, "import", "b.realm", "csv", "--schema", "schema.json")
        #expect(imp.status == 0, "\(imp.stderr)")
        let a = try cli(dir, "export", "a.realm"), b = try cli(dir, "export", "b.realm")
        #expect(a.stdout == b.stdout && a.stdout.contains("Tokyo"), "\(b.stdout)")
    }

    /// An error inside an embedded object names the record and the embedded class's property; a mixed cell
    /// that is not JSON says how a string is written.
    @Test func errorsInsideEmbeddedObjectsAndMixedCells() throws {
        let dir = TempDir()
        write(dir, "schema.json", CollectionTypesToolTests.schema)
        write(dir, "Person.csv", "name,home\r\nAnn,\"{\"\"city\"\":\"\"Tokyo\"\"}\"\r\nBob,\"{\"\"city\"\":7}\"\r\n")
        let r = try cli(dir, "import", "p.realm", "Person.csv", "--schema", "schema.json")
        #expect(r.status == 1 && r.stderr.contains("Person.csv: line 3 (record 2): Address.city: expected a string, found a number"), "\(r.stderr)")
        write(dir, "Person.csv", "name,extra\r\nAnn,hello\r\n")
        let m = try cli(dir, "import", "p.realm", "Person.csv", "--schema", "schema.json")
        #expect(m.status == 1 && m.stderr.contains("line 2 (record 1), column 'extra': a mixed value (a string in it is quoted: \"text\") is written as JSON"),
                "\(m.stderr)")
        let db = try Database.open(path: dir.file("p.realm"), options: DatabaseOptions(readOnly: true))
        // The classes the schema file made went with the rolled-back transaction.
        #expect(try db.read { $0.schema.isEmpty })
    }

    static let edgeSchema = """
    [
      {"name": "Dog", "primaryKey": "name", "properties": {"name": "string", "age": "int", "weight": "double?"}},
      {"name": "Note", "properties": {"title": "string", "body": "string?", "tags": "string[]", "dog": "Dog", "any": "mixed?"}},
      {"name": "Person", "primaryKey": "id", "properties": {"id": "int", "name": "string", "notes": "Note[]", "best": "Note"}}
    ]
    """

    static let long = String(repeating: "長い文字列🐶,\"x\"\n", count: 1000)   // 11,000 characters

    /// Hand-written files in the export's own form (header in schema order, CRLF): imported and exported again,
    /// they come back byte for byte.
    static let edgeFiles: [String: String] = [
        "Dog.csv": "name,age,weight\r\nRex,5,12.5\r\n\"Fido, the \"\"good\"\" boy\",3,\r\nポチ🐕,-9223372036854775808,NaN\r\n"
            + "\"\",9223372036854775807,-Infinity\r\n",
        "Note.csv": "title,body,tags,dog,any\r\n"
            + "\"line one\nline two\r\nline three\",,\"[\"\"a\"\",\"\"b,c\"\"]\",Rex,\"\"\"text\"\"\"\r\n"
            + "\"\",,[],,42\r\n"
            + "\"\(long.replacingOccurrences(of: "\"", with: "\"\""))\",\"\",[],\"Fido, the \"\"good\"\" boy\",\"{\"\"$date\"\":\"\"2024-05-01T00:00:00Z\"\"}\"\r\n"
            + "\"日本語 \"\"引用\"\" no\",👩‍👩‍👧‍👦🏳️‍🌈,\"[\"\"中文\"\",\"\"\"\"]\",ポチ🐕,\"{\"\"d\"\":{\"\"$class\"\":\"\"Dog\"\",\"\"$pk\"\":\"\"Rex\"\"},\"\"k\"\":[1,\"\"x\"\",null]}\"\r\n"
            + "plain,\"\(long.replacingOccurrences(of: "\"", with: "\"\""))\",[],,\"\"\"\"\"\"\r\n",
        "Person.csv": "id,name,notes,best\r\n"
            + "1,佐藤 花子,\"[{\"\"$class\"\":\"\"Note\"\",\"\"$index\"\":0},{\"\"$class\"\":\"\"Note\"\",\"\"$index\"\":2}]\",\"{\"\"$class\"\":\"\"Note\"\",\"\"$index\"\":4}\"\r\n"
            + "2,\"\",[],\r\n",
    ]

    @Test func handWrittenEdgeCasesRoundTripByteIdentical() throws {
        let dir = TempDir()
        write(dir, "schema.json", Self.edgeSchema)
        try FileManager.default.createDirectory(atPath: dir.file("in"), withIntermediateDirectories: true)
        for (name, text) in Self.edgeFiles { write(dir, "in/\(name)", text) }
        let imp = try cli(dir, "import", "e.realm", "in", "--schema", "schema.json")
        #expect(imp.status == 0, "\(imp.stderr)")
        #expect(imp.stderr.contains("imported 11 objects"), "\(imp.stderr)")
        #expect(try cli(dir, "export", "e.realm", "--format", "csv", "--output", "out").status == 0)
        let out = try files(dir.file("out"))
        for (name, text) in Self.edgeFiles.sorted(by: { $0.key < $1.key }) {
            let got = out[name] ?? Data()
            let same = got == Data(text.utf8)
            #expect(same, "\(name): \(firstDifference(Data(text.utf8), got))")
        }
        // The values are what the cells say: null and the empty string apart, long values whole, links resolved.
        let db = try Database.open(path: dir.file("e.realm"), options: DatabaseOptions(readOnly: true))
        try db.read { s in
            let notes = try s.table("Note")
            let keys = try s.keys(notes)
            let body = try s.property(notes, "body"), title = try s.property(notes, "title"), any = try s.property(notes, "any")
            #expect(try s.value(keys[0], body) == .null && s.value(keys[2], body) == .string(""))
            #expect(try s.value(keys[0], title) == .string("line one\nline two\r\nline three"))
            #expect(try s.value(keys[2], title) == .string(Self.long) && Self.long.count >= 10_000)
            #expect(try s.value(keys[0], any) == .string("text") && s.value(keys[1], any) == .int(42))
            #expect(try s.value(keys[4], any) == .string(""))
            let people = try s.table("Person")
            let ann = try #require(try s.object(people, primaryKey: .int(1)))
            let best = try s.value(ann, s.property(people, "best"))
            #expect(best == .link(keys[4]))
            let dogs = try s.table("Dog")
            let unnamed = try #require(try s.object(dogs, primaryKey: .string("")))
            #expect(try s.value(unnamed, s.property(dogs, "age")) == .int(.max))
        }
    }

    /// One file of a class named by `--class` (or by the file's name), with LF line ends, a byte order mark
    /// and columns in another order; links to objects already in the database.
    @Test func singleFileWithClassOptionLFAndBOM() throws {
        let dir = TempDir()
        write(dir, "schema.json", Self.edgeSchema)
        write(dir, "dogs.txt", "\u{FEFF}age,name\n4,Rex\n2,\"Ko\nro\"\n")
        let a = try cli(dir, "import", "e.realm", "dogs.txt", "--format", "csv", "--class", "Dog", "--schema", "schema.json")
        #expect(a.status == 0 && a.stderr.contains("imported 2 objects"), "\(a.stderr)")
        write(dir, "Note.csv", "title,dog\nhello,Rex\n")
        let b = try cli(dir, "import", "e.realm", "Note.csv")
        #expect(b.status == 0 && b.stderr.contains("imported 1 object\n"), "\(b.stderr)")
        let q = try cli(dir, "query", "e.realm", "Note", "dog.age == 4", "--format", "count")
        #expect(q.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(q.stdout) \(q.stderr)")
        let c = try cli(dir, "query", "e.realm", "Dog", "name BEGINSWITH 'Ko' AND age == 2", "--format", "count")
        #expect(c.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(c.stdout) \(c.stderr)")
        let json = try cli(dir, "import", "e.realm", "Note.csv", "--format", "json")
        #expect(json.status == 1 && json.stderr.contains("invalid JSON"), "\(json.stderr)")
        let cls = try cli(dir, "import", "e.realm", "schema.json", "--class", "Dog")
        #expect(cls.status == 2 && cls.stderr.contains("--class is for CSV"), "\(cls.stderr)")
    }

    @Test(arguments: [
        ("Dog.csv", "name,agee\r\nX,1\r\n", "bad/Dog.csv: line 1, column 'agee': Dog has no such property (did you mean 'age'?)"),
        ("Dog.csv", "name,age\r\nA,1\r\nB,forty\r\n", "bad/Dog.csv: line 3 (record 2), column 'age': expected an integer"),
        ("Dog.csv", "name,age\r\n\"A\r\nB\",1\r\nC,1.5\r\n", "bad/Dog.csv: line 4 (record 2), column 'age': expected an integer"),
        ("Dog.csv", "name,age,weight\r\nA,1,heavy\r\n", "bad/Dog.csv: line 2 (record 1), column 'weight': expected a number"),
        ("Dog.csv", "name,age\r\nA,\r\n", "bad/Dog.csv: line 2 (record 1), column 'age': null in a required int property"),
        ("Dog.csv", "name,age\r\nA,1\r\n\"B,2\r\nC,3\r\n", "bad/Dog.csv: line 3: field 1: a quoted field is never closed"),
        ("Dog.csv", "name,age\r\nA,1\r\nB,2,3\r\n", "bad/Dog.csv: line 3 (record 2): 3 fields where the header has 2"),
        ("Dog.csv", "name,age\r\nA,1\r\n\r\n", "bad/Dog.csv: line 3 (record 2): 1 field where the header has 2 (an empty line)"),
        ("Dog.csv", "name,age\r\nA,1\r\nA,2\r\n", "bad/Dog.csv: line 3 (record 2), column 'name': duplicate primary key"),
        ("Dog.csv", "name,name\r\nA,B\r\n", "bad/Dog.csv: line 1, column 'name': a second column of the same name"),
        ("Dog.csv", "", "bad/Dog.csv: line 1: the file is empty"),
        ("Cat.csv", "name\r\nTom\r\n", "bad/Cat.csv: Cat: no such class in the database"),
        ("Note.csv", "title,dog\r\nx,Nobody\r\n", "bad/Note.csv: line 2 (record 1), column 'dog': no Dog with primary key \"Nobody\""),
        ("Note.csv", "title,tags\r\nx,\"[\"\"a\"\"\"\r\n", "bad/Note.csv: line 2 (record 1), column 'tags': a list is written as JSON"),
        ("Person.csv", "id,name,best\r\n1,A,\"{\"\"$class\"\":\"\"Note\"\",\"\"$index\"\":5}\"\r\n",
         "bad/Person.csv: line 2 (record 1), column 'best': $index 5 is not the position of a Note in this file"),
    ])
    func badFilesAreErrorsNamingFileLineAndColumnAndWriteNothing(name: String, text: String, message: String) throws {
        let dir = TempDir()
        write(dir, "schema.json", Self.edgeSchema)
        write(dir, "Dog.csv", "name,age\r\nKeep,1\r\n")
        #expect(try cli(dir, "import", "p.realm", "Dog.csv", "--schema", "schema.json").status == 0)
        try FileManager.default.createDirectory(atPath: dir.file("bad"), withIntermediateDirectories: true)
        // A good file beside the bad one: its objects are rolled back with the rest.
        if name != "Note.csv" { write(dir, "bad/Note.csv", "title\r\nkept only if all is well\r\n") }
        write(dir, "bad/\(name)", text)
        let r = try cli(dir, "import", "p.realm", "bad")
        #expect(r.status == 1)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        let db = try Database.open(path: dir.file("p.realm"), options: DatabaseOptions(readOnly: true))
        #expect(try db.read { s in [try s.count("Dog"), try s.count("Note"), try s.count("Person")] } == [1, 0, 0])
    }
}

/// CSV imports of damaged files (truncated, a byte changed, quotes, separators and line breaks put in, invalid
/// UTF-8, huge fields): never a crash, every failure a `ToolError` naming a file, and a failed import writes
/// nothing. `REALM_FUZZ_IMPORT=N` runs N/4 imports instead of 150 (a quarter of the JSON fuzz test's N).
@Suite struct CSVImportFuzzTests {
    static let valid = [
        "Person.csv": "id,name,age,score,tags,friend,photo,born\r\n1,Ada,36,1.5,\"[\"\"a\"\",\"\"b\"\"]\",2,AAEC,1815-12-10T00:00:00Z\r\n"
            + "2,東京 🐕,,-0.0,[],,,\r\n3,\"x, \"\"y\"\"\r\nz\",9223372036854775807,1e300,[],1,\"\",\r\n",
        "Dog.csv": "name,owner\r\nRex,1\r\nFido,3\r\n",
    ]

    @Test func damagedFilesFailCleanlyAndWriteNothing() throws {
        let n = ProcessInfo.processInfo.environment["REALM_FUZZ_IMPORT"].flatMap { Int($0) }.map { $0 / 4 } ?? 150
        let dir = TempDir()
        let db = try Database.open(path: dir.file("import.realm"))
        try db.write { tx in try tx.createClasses(ImportFuzzTests.schema) }
        func sources(_ files: [String: [UInt8]]) -> [CSVImport.Source] {
            files.keys.sorted().map { name in
                _ = FileManager.default.createFile(atPath: dir.file(name), contents: Data(files[name]!))
                return CSVImport.Source(path: dir.file(name), className: String(name.dropLast(4)))
            }
        }
        func clear() throws {
            try db.write { tx in
                for c in ["Dog", "Person"] {
                    let t = try tx.table(c)
                    for k in try tx.keys(t) { try tx.delete(t, k) }
                }
            }
        }
        let base = Self.valid.mapValues { Array($0.utf8) }
        #expect(try CSVImport(sources: sources(base), schema: nil).run(into: db).total == 5)
        try clear()
        let tokens: [String] = ["\"", "\"\"", ",", "\r\n", "\n", "\r", "\u{FEFF}", "{", "[", "]", "null", "NaN", "-",
                                "9999999999999999999999", "{\"$class\":\"Person\",\"$index\":7}", "\"\"\"", "🐕", "\u{0}"]
        var rng = SplitMix64(seed: 0xC5F_2026)
        var imported = 0, failed = 0
        for i in 0..<n {
            var files = base
            let name = rng.below(2) == 0 ? "Person.csv" : "Dog.csv"
            var doc = files[name]!
            switch i % 5 {
            case 0: doc = Array(doc.prefix(rng.below(doc.count)))
            case 1: doc[rng.below(doc.count)] = UInt8(truncatingIfNeeded: rng.next())
            case 2, 3:
                for _ in 0..<(1 + rng.below(3)) {
                    let at = rng.below(doc.count)
                    let end = min(doc.count, at + rng.below(6))
                    doc.replaceSubrange(at..<(i % 5 == 2 ? at : end), with: Array(tokens[rng.below(tokens.count)].utf8))
                }
            default:
                let huge = [String(repeating: "é", count: 300_000), String(repeating: "9", count: 100_000),
                            "\"" + String(repeating: "\"\"", count: 50_000) + "\""][rng.below(3)]
                doc = Array("id,name,score\r\n\(1_000 + i),\(huge),\(huge)\r\n".utf8)
                files["Person.csv"] = doc
                doc = files[name]!
            }
            files[name] = doc
            let before = try ImportFuzzTests.dump(db)
            do {
                _ = try CSVImport(sources: sources(files), schema: nil).run(into: db)
                imported += 1
                try clear()
            } catch let e as ToolError {
                failed += 1
                #expect(e.description.contains(".csv"), "\(e)")
                let after = try ImportFuzzTests.dump(db)
                if after != before { Issue.record("import \(i) failed (\(e)) but changed the database") }
            }
        }
        #expect(failed > n / 4 && imported > 0, "\(imported) imported, \(failed) failed")
        #expect(try db.verify().isOK)
    }
}

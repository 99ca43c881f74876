import Foundation
import Testing
import TestSupport

/// Sets, dictionaries, embedded objects and mixed values holding links and collections through the command
/// line: schema files, import, export and the schema's other forms.
@Suite struct CollectionTypesToolTests {
    static let schema = """
    [
      {"name": "Address", "embedded": true, "properties": {"city": "string", "street": "string?"}},
      {"name": "Dog", "primaryKey": "name", "properties": {"name": "string", "age": "int"}},
      {"name": "Person", "primaryKey": "name", "properties": {
         "name": "string", "tags": "string<>", "lucky": "int?<>", "scores": "int?{}", "pets": "Dog{}",
         "friends": "Dog<>", "home": "Address", "past": "Address[]", "extra": "mixed"}}
    ]
    """

    static let data = """
    {
      "Dog": [{"name": "Rex", "age": 5}, {"name": "Fido", "age": 3}],
      "Person": [
        {"name": "Ann", "tags": ["b", "a", "b"], "lucky": [3, null, 1], "scores": {"math": 90, "art": null, "日本": 1},
         "pets": {"d1": "Rex", "none": null}, "friends": ["Fido", "Rex"], "home": {"city": "Tokyo", "street": "1-1"},
         "past": [{"city": "Osaka"}, {"city": "Kyoto", "street": null}],
         "extra": {"k": [1, "x", {"$date": "2024-05-01T00:00:00.000Z"}], "d": {"$class": "Dog", "$pk": "Fido"}}},
        {"name": "Bob", "tags": [], "scores": {}, "extra": [true, {"n": null}]}
      ]
    }
    """

    @Test func importExportRoundTrip() throws {
        let dir = TempDir()
        write(dir, "schema.json", Self.schema)
        write(dir, "data.json", Self.data)
        let imp = try cli(dir, "import", "a.realm", "data.json", "--schema", "schema.json")
        #expect(imp.status == 0, "\(imp.stderr)")
        let a = try cli(dir, "export", "a.realm")
        #expect(a.status == 0, "\(a.stderr)")
        let out = a.stdout
        #expect(out.contains("\"tags\": [\n        \"a\",\n        \"b\"\n      ]") || out.contains("\"tags\": [\"a\", \"b\"]"), "\(out)")
        #expect(out.contains("\"city\": \"Tokyo\""), "embedded objects are written inside their parent")
        #expect(!out.contains("\"Address\": ["), "and their class is not exported on its own")
        #expect(out.contains("\"$class\": \"Dog\""), "a mixed link names its class")
        write(dir, "a.json", out)
        let schema = try cli(dir, "schema", "a.realm", "--format", "json")
        write(dir, "s2.json", schema.stdout)
        #expect(schema.stdout.contains("\"string<>\"") && schema.stdout.contains("\"int?{}\"") && schema.stdout.contains("\"embedded\": true"),
                "\(schema.stdout)")
        let imp2 = try cli(dir, "import", "b.realm", "a.json", "--schema", "s2.json")
        #expect(imp2.status == 0, "\(imp2.stderr)")
        #expect(try cli(dir, "export", "b.realm").stdout == out)
        let verify = try cli(dir, "verify", "b.realm")
        #expect(verify.status == 0 && verify.stdout.contains("no problems"), "\(verify.stdout)")
        let swift = try cli(dir, "schema", "a.realm", "--format", "swift")
        #expect(swift.stdout.contains("class Address: EmbeddedObject") && swift.stdout.contains("MutableSet<String>")
                && swift.stdout.contains("Map<String, Dog?>"), "\(swift.stdout)")
        let q = try cli(dir, "query", "a.realm", "Person", "scores['math'] > 50 AND 'a' IN tags AND home.city == 'Tokyo'")
        #expect(q.status == 0 && q.stdout.contains("Ann") && !q.stdout.contains("Bob"), "\(q.stdout) \(q.stderr)")
    }

    @Test func badDictionaryKeysAreErrorsNamingWhere() throws {
        let dir = TempDir()
        write(dir, "schema.json", Self.schema)
        write(dir, "bad.json", #"{"Person": [{"name": "X", "scores": {"a.b": 1}}]}"#)
        let imp = try cli(dir, "import", "a.realm", "bad.json", "--schema", "schema.json")
        #expect(imp.status != 0)
        #expect(imp.stderr.contains("scores") && imp.stderr.contains("a.b"), "\(imp.stderr)")
    }
}

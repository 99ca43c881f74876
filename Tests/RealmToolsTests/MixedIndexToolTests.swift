import Foundation
import Testing
import RealmStorage
@testable import RealmTools
import TestSupport

/// `"indexed": true` on a mixed property in a schema file: imported as an index, shown by `schema` (in both
/// formats), written back by the schema file form, and used by queries.
@Suite struct MixedIndexToolTests {
    @Test func aSchemaFileIndexesAMixedProperty() throws {
        let dir = TempDir()
        write(dir, "schema.json", """
        [{"name": "Item", "properties": {"label": "string", "value": {"type": "mixed", "indexed": true}}}]
        """)
        write(dir, "data.json", """
        {"Item": [{"label": "a", "value": 1}, {"label": "b", "value": 1.5}, {"label": "c", "value": "1"}, {"label": "d", "value": null}]}
        """)
        let r = try cli(dir, "import", "m.realm", "data.json", "--schema", "schema.json")
        #expect(r.status == 0, "\(r.stderr)")
        let db = try Database.open(path: dir.file("m.realm"), options: DatabaseOptions(readOnly: true))
        let schema = try db.read { s in s.classSchema("Item") }
        #expect(schema?.properties.first { $0.name == "value" }?.isIndexed == true)
        let text = try cli(dir, "schema", "m.realm")
        #expect(text.stdout.contains("mixed") && text.stdout.contains("indexed"), "\(text.stdout)")
        let swift = try cli(dir, "schema", "m.realm", "--format", "swift")
        #expect(swift.stdout.contains("@Persisted(indexed: true) var value: AnyRealmValue"), "\(swift.stdout)")
        let query = try cli(dir, "query", "m.realm", "Item", "value == 1.0", "--format", "count")
        #expect(query.status == 0, "\(query.stderr)")
        #expect(query.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(query.stdout)")
        let verify = try cli(dir, "verify", "m.realm")
        #expect(verify.status == 0 && verify.stdout.contains("no problems"), "\(verify.stdout)")
    }
}

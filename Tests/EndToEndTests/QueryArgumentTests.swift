import Foundation
import Testing
import TestSupport

/// `realm-browser query ... --arg`: typed arguments in the tagged JSON forms the data files use.
@Suite(.serialized) struct QueryArgumentTests {
    @Test func taggedJSONArgumentsAreTypedValues() throws {
        let dir = TempDir()
        let bin = try productExecutablePath("realm-browser", environmentVariable: "REALM_BROWSER")
        let demo = try runProcess(bin, ["demo", "d.realm", "--objects", "2000", "--seed", "1"], in: dir.path)
        try #require(demo.status == 0, "\(demo.stderr)")
        func count(_ q: String, _ args: [String] = []) throws -> Int {
            let r = try runProcess(bin, ["query", "d.realm", "AllTypes", q, "--format", "count"] + args.flatMap { ["--arg", $0] }, in: dir.path)
            #expect(r.status == 0, "\(q): \(r.stderr)")
            return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        let dates = try count("date == 1900-01-01@00:00:00")
        #expect(dates > 0)
        #expect(try count("date == $0", [#"{"$date": "1900-01-01T00:00:00Z"}"#]) == dates)
        let oids = try count("optObjectId == oid(000000000000000000000000)")
        #expect(oids > 0)
        #expect(try count("optObjectId == $0", [#"{"$oid": "000000000000000000000000"}"#]) == oids)
        let uuids = try count("optUUID == uuid(00000000-0000-0000-0000-000000000000)")
        #expect(uuids > 0)
        #expect(try count("optUUID == $0", [#"{"$uuid": "00000000-0000-0000-0000-000000000000"}"#]) == uuids)
        #expect(try count("optDecimal == $0", [#"{"$decimal": "0"}"#]) == count("optDecimal == 0"))
        #expect(try count("date IN $0", [#"[{"$date": "1900-01-01T00:00:00Z"}, {"$date": "3000-01-01T00:00:00.999999999Z"}]"#])
            == count("date IN {1900-01-01@00:00:00, 3000-01-01@00:00:00:999999999}"))
    }
}

import Foundation
import RealmStorage
import RealmTools
import Testing

/// Dates as text (`ValueCodec.iso8601` and `parseISO8601`), which the export, the import and the browser's cells
/// use: every timestamp has a text that reads back as itself, out to the extremes Realm's SDKs store, and a text
/// beyond them is refused rather than wrapped.
@Suite struct DateTextTests {
    static let m = Int64.min, x = Int64.max

    /// Expected texts computed apart from the code under test (Python's `datetime`, shifted by 400-year cycles).
    static let cases: [(Timestamp, String)] = [
        (Timestamp(seconds: 0), "1970-01-01T00:00:00Z"),
        (Timestamp(seconds: -1, nanoseconds: -1), "1969-12-31T23:59:58.999999999Z"),
        (Timestamp(seconds: 1_700_000_000, nanoseconds: 120_000_000), "2023-11-14T22:13:20.12Z"),
        (Timestamp(seconds: -62_135_596_800), "0001-01-01T00:00:00Z"),
        (Timestamp(seconds: -62_167_219_201), "-0001-12-31T23:59:59Z"),
        (Timestamp(seconds: 253_402_300_800), "+10000-01-01T00:00:00Z"),
        // What Realm Cocoa 0.98 (`Long.MIN_VALUE` seconds) and Realm Core 6 (the extremes) wrote into the
        // `alltypes-min` and `-max` files of realm-java's tests.
        (Timestamp(seconds: m), "-292277022657-01-27T08:29:52Z"),
        (Timestamp(seconds: m, nanoseconds: -999_999_999), "-292277022657-01-27T08:29:51.000000001Z"),
        (Timestamp(seconds: x), "+292277026596-12-04T15:30:07Z"),
        (Timestamp(seconds: x, nanoseconds: 999_999_999), "+292277026596-12-04T15:30:07.999999999Z"),
    ]

    @Test(arguments: 0..<cases.count)
    func aTimestampIsWrittenAndReadBack(_ i: Int) {
        let (t, text) = Self.cases[i]
        #expect(ValueCodec.iso8601(t) == text)
        #expect(ValueCodec.parseISO8601(text) == t, "\(text)")
    }

    @Test func nanosecondsOutsideTheirRangeAreCarriedIntoTheSeconds() {
        // A foreign file may hold them; the text is still a date.
        #expect(ValueCodec.iso8601(Timestamp(seconds: 0, nanoseconds: 1_500_000_000)) == "1970-01-01T00:00:01.5Z")
        #expect(ValueCodec.iso8601(Timestamp(seconds: 0, nanoseconds: -1_500_000_000)) == "1969-12-31T23:59:58.5Z")
    }

    @Test(arguments: [
        "+292277026596-12-04T15:30:08Z",            // one second past the last
        "-292277022657-01-27T08:29:51Z",            // one second before the first
        "+300000000000-01-01T00:00:00Z",
        "-999999999999-01-01",
        "+9999999999999-01-01T00:00:00Z",           // more year digits than any timestamp needs
        "+99999999999999999999-01-01T00:00:00Z",    // more than 64 bits
    ])
    func aDateBeyondTheTimestampsIsRefused(_ text: String) {
        #expect(ValueCodec.parseISO8601(text) == nil)
    }
}

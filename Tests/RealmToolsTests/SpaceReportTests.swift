import Foundation
import Testing
import RealmStorage
@testable import RealmTools
import TestSupport

/// `info --detail`: every page of the file is in exactly one structure's row, and each structure is where its
/// data is (an index's entries in its index row, a column's bytes in its column row).
@Suite struct SpaceReportTests {
    @Test func everyPageIsInOneRowAndDataIsWhereItIs() throws {
        let dir = TempDir()
        let path = dir.file("space.realm")
        do {
            let db = try Database.open(path: path)
            try db.write { tx in
                try tx.createClasses([
                    ClassSchema(name: "Dog", properties: [PropertySchema(name: "n", type: .int)]),
                    ClassSchema(name: "Person", properties: [
                        PropertySchema(name: "name", type: .string, isIndexed: true),
                        PropertySchema(name: "bio", type: .string),
                        .link("dog", to: "Dog"),
                    ]),
                ])
                for i in 0..<3000 {
                    let d = try tx.createObject("Dog", ["n": .int(Int64(i))])
                    try tx.createObject("Person", ["name": .string("person \(i)"), "bio": .string(String(repeating: "長", count: i % 7 == 0 ? 500 : 20)),
                                                   "dog": .link(d)])
                }
            }
            try db.write { tx in try tx.deleteAll(tx.table("Dog")) }  // frees pages
        }
        let db = try Database.open(path: path)
        let report = try SpaceReport(database: db)
        #expect(report.problems.isEmpty)
        let pages = report.structures.reduce(UInt64(0)) { $0 + $1.use.pages }
        let accounted = Int(pages) * Database.bytesPerPage
        #expect(accounted == report.pageBytes)
        func row(_ label: String) -> SpaceUse? { report.structures.first { $0.label == label }?.use }
        #expect((row("free pages")?.pages ?? 0) > 0)
        #expect((row("Person.name: index")?.nodes ?? 0) > 3)
        #expect((row("Person: clusters")?.bytes ?? 0) > 3000 * 20)
        #expect(row("Dog: clusters") == nil)  // deleted: its pages are free
        let bio = try #require(report.columns.first { $0.label == "Person.bio" }?.use.bytes)
        let name = try #require(report.columns.first { $0.label == "Person.name" }?.use.bytes)
        #expect(bio > name, "\(report.text)")
        #expect(report.text.contains("Person.name: index") && report.text.contains("columns inside the clusters"))
    }
}

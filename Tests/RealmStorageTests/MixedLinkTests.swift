import Foundation
import Testing
@testable import RealmStorage

/// Typed links and nested collections in mixed values: validation, backlinks at any depth, what deleting a
/// target or an origin does (Realm Core's nullify rules), schema changes, verify, reopen and compaction.
@Suite struct MixedLinkTests {
    static let schema: [ClassSchema] = [
        ClassSchema(name: "Target", properties: [PropertySchema(name: "name", type: .string)]),
        ClassSchema(name: "Other", properties: [PropertySchema(name: "n", type: .int), .link("part", to: "Part")]),
        ClassSchema(name: "Part", properties: [PropertySchema(name: "v", type: .int)], isEmbedded: true),
        ClassSchema(name: "Doc", properties: [
            PropertySchema(name: "name", type: .string),
            PropertySchema(name: "any", type: .mixed, isOptional: true),
            PropertySchema(name: "anys", type: .mixed, isOptional: true, isList: true),
        ]),
    ]

    /// A database of `schema` with targets t0...t(n-1) and one document per name in `docs`.
    struct Fixture {
        let dir: TempDir
        let db: Database
        var targets: [ObjectKey] = []
        var others: [ObjectKey] = []
        var docs: [ObjectKey] = []
        var targetID: UInt32 = 0
        var otherID: UInt32 = 0

        init(in dir: TempDir = TempDir(), targets n: Int = 3, docs: Int = 4) throws {
            self.dir = dir
            db = try Database.open(path: dir.file("m.realm"))
            var t: [ObjectKey] = [], o: [ObjectKey] = [], d: [ObjectKey] = []
            try db.write { tx in
                try tx.createClasses(MixedLinkTests.schema)
                for i in 0..<n { t.append(try tx.createObject("Target", ["name": .string("t\(i)")])) }
                for i in 0..<2 { o.append(try tx.createObject("Other", ["n": .int(Int64(i))])) }
                for i in 0..<docs { d.append(try tx.createObject("Doc", ["name": .string("d\(i)")])) }
            }
            targets = t
            others = o
            self.docs = d
            targetID = try db.read { $0.classID(named: "Target")! }
            otherID = try db.read { $0.classID(named: "Other")! }
        }

        func link(_ i: Int) -> Value { .typedLink(classID: targetID, key: targets[i]) }

        func set(_ doc: Int, _ value: Value) throws {
            try db.write { tx in try tx.set(docs[doc], "Doc", "any", value) }
        }

        func any(_ doc: Int) throws -> Value { try db.read { try $0.value(docs[doc], "Doc", "any") } }

        func anys(_ doc: Int) throws -> [Value] {
            try db.read { s in try s.list(docs[doc], s.property(s.table("Doc"), "anys")) }
        }

        /// The documents whose `property` links to target `i`, once per link.
        func backlinks(_ i: Int, _ property: String = "any", className: String = "Target") throws -> [ObjectKey] {
            try db.read { s in try s.backlinks(className == "Target" ? targets[i] : others[i], in: s.table(className), from: "Doc", property: property) }
        }

        func expectVerified(_ sourceLocation: SourceLocation = #_sourceLocation) throws {
            let report = try db.verify()
            #expect(report.isOK, "\(report)", sourceLocation: sourceLocation)
        }
    }

    static func nested(_ depth: Int) -> Value {
        var v = Value.int(1)
        for _ in 0..<depth { v = .list([v]) }
        return v
    }

    // MARK: Typed links

    @Test func aTypedLinkIsSetReadReplacedAndClearedWithExactBacklinks() throws {
        let f = try Fixture()
        let before = try f.db.snapshot()
        try f.set(0, f.link(0))
        #expect(try f.any(0) == f.link(0))
        #expect(try f.backlinks(0) == [f.docs[0]])
        // The target's new backlink is a change of the target, though its backlink property is new too.
        let changes = try f.db.read { s in try s.changes(in: "Target", since: before) }
        #expect(changes.backlinksChanged == [f.targets[0]: ["Doc.any"]])
        #expect(changes.modified.isEmpty && !changes.schemaChanged)
        before.close()
        // The target class got its hidden backlink property, made the first time a link reached it.
        try f.db.read { s in
            let target = try #require(s.catalogue.classInfo(named: "Target"))
            let bl = try #require(target.properties.first { $0.name == "@links.Doc.any" })
            #expect(bl.type == .backlink && bl.isHidden)
            #expect(bl.targetClassID == s.classID(named: "Doc"))
            #expect(bl.originColumnID == s.catalogue.classInfo(named: "Doc")!.property(named: "any")!.columnID)
            #expect(!s.catalogue.classInfo(named: "Other")!.properties.contains { $0.type == .backlink })
        }
        try f.expectVerified()

        try f.set(0, f.link(1))
        #expect(try f.backlinks(0).isEmpty)
        #expect(try f.backlinks(1) == [f.docs[0]])
        try f.set(1, f.link(1))
        #expect(try f.backlinks(1) == [f.docs[0], f.docs[1]])
        try f.set(0, .null)
        #expect(try f.backlinks(1) == [f.docs[1]])
        try f.set(1, .string("no longer a link"))
        #expect(try f.backlinks(1).isEmpty)
        try f.expectVerified()

        // In a list of mixed values, each element's links.
        try f.db.write { tx in
            let doc = try tx.table("Doc"), anys = try tx.property(doc, "anys")
            try tx.setList(f.docs[2], anys, [f.link(0), .int(1), f.link(0)])
            try tx.listAppend(f.docs[2], anys, .list([f.link(2)]))
            try tx.listSet(f.docs[2], anys, .null, at: 0)
            try tx.listRemove(f.docs[2], anys, at: 2)
        }
        #expect(try f.anys(2) == [.null, .int(1), .list([f.link(2)])])
        #expect(try f.backlinks(0, "anys").isEmpty)
        #expect(try f.backlinks(2, "anys") == [f.docs[2]])
        try f.expectVerified()
    }

    /// Every way of writing a mixed value records its links: creating an object by name or by columns, with a
    /// list of mixed values, and `updateAll`.
    @Test func everyWritePathRecordsBacklinks() throws {
        let f = try Fixture(docs: 0)
        let (a, b) = try f.db.write { tx in
            let doc = try tx.table("Doc")
            let a = try tx.createObject(doc, ["any": .list([f.link(0)])], lists: ["anys": [f.link(1), .list([f.link(1)])]])
            let b = try tx.createObject(doc, columns: [tx.property(doc, "name"), tx.property(doc, "any")],
                                        values: [.string("b"), .dictionary(ValueDictionary([("x", f.link(0))]))])
            return (a, b)
        }
        #expect(try f.backlinks(0) == [a, b])
        #expect(try f.backlinks(1, "anys") == [a, a])
        try f.db.write { tx in
            let doc = try tx.table("Doc")
            try tx.updateAll(doc, tx.property(doc, "any")) { _ in .typedLink(classID: f.targetID, key: f.targets[2]) }
        }
        #expect(try f.backlinks(0).isEmpty)
        #expect(try f.backlinks(2) == [a, b])
        try f.expectVerified()
    }

    /// Defect: an object created with a dictionary of mixed values (`createObject(_:_:lists:dictionaries:)`)
    /// recorded no backlink for a typed link among the values, so `verify()` found the link without its backlink
    /// and deleting the target left the link dangling.
    @Test func anObjectCreatedWithADictionaryOfMixedValuesRecordsTheirBacklinks() throws {
        let dir = TempDir()
        let db = try Database.open(path: dir.file("d.realm"))
        let (target, holder, targetID) = try db.write { tx in
            try tx.createClasses([
                ClassSchema(name: "Target", properties: [PropertySchema(name: "name", type: .string)]),
                ClassSchema(name: "Holder", properties: [PropertySchema(name: "attrs", type: .mixed, isOptional: true, isDictionary: true)]),
            ])
            let target = try tx.createObject("Target", ["name": .string("t")])
            let id = try #require(tx.classID(named: "Target"))
            let link = Value.typedLink(classID: id, key: target)
            let holder = try tx.createObject("Holder", dictionaries: ["attrs": ValueDictionary([
                ("ref", link), ("nested", .list([.int(1), link])),
            ])])
            return (target, holder, id)
        }
        #expect(try db.read { s in try s.backlinks(target, in: s.table("Target"), from: "Holder", property: "attrs") } == [holder, holder])
        #expect(try db.verify().isOK)
        try db.write { tx in try tx.delete("Target", target) }
        let attrs = try db.read { s in try s.dictionary(holder, s.property(s.table("Holder"), "attrs")) }
        #expect(attrs["ref"] == .null && attrs["nested"] == .list([.int(1)]), "\(attrs), the target (class \(targetID)) deleted")
        #expect(try db.verify().isOK)
    }

    @Test func aLinkNestedTwiceToTheSameTargetIsCountedTwice() throws {
        let f = try Fixture()
        let v = Value.list([f.link(0), .dictionary(ValueDictionary([("a", f.link(0)), ("b", f.link(1))])), .list([.list([f.link(0)])])])
        try f.set(0, v)
        #expect(try f.backlinks(0) == [f.docs[0], f.docs[0], f.docs[0]])
        #expect(try f.backlinks(1) == [f.docs[0]])
        try f.db.read { s in
            let entries = try BacklinkTreeTests.entries(s, "Target", "@links.Doc.any")
            #expect(entries.map(\.2) == [0, 3, 0], "a pair entry and a counted entry for target 0, a pair for target 1")
        }
        try f.expectVerified()
        // Replacing the value forgets every link of the old one.
        try f.set(0, .list([f.link(0)]))
        #expect(try f.backlinks(0) == [f.docs[0]])
        #expect(try f.backlinks(1).isEmpty)
        try f.expectVerified()
    }

    // MARK: Nested collections

    @Test func nestedCollectionsSurviveCommitReopenAndCompaction() throws {
        let long = String(repeating: "長い文字列🙂", count: 1_700)  // over 10,000 characters
        #expect(long.count > 10_000)
        let dict = ValueDictionary([("名前", .string("犬🐕")), ("emoji🎉", .list([.int(1), .null, .double(2.5)])),
                                    ("long", .string(long)), ("z", .dictionary(ValueDictionary([("inner", .bool(true))])))])
        let small = Value.list([.int(1), .string("x"), .dictionary(ValueDictionary()), .list([])])
        let dir = TempDir()
        var values: [Value] = []
        var keys: (docs: [ObjectKey], targets: [ObjectKey], targetID: UInt32) = ([], [], 0)
        do {
            let f = try Fixture(in: dir)
            keys = (f.docs, f.targets, f.targetID)
            values = [.dictionary(dict), small, .list([f.link(0), .dictionary(dict), f.link(1)])]
            for (i, v) in values.enumerated() { try f.set(i, v) }
            try f.db.write { tx in try tx.setList(f.docs[3], tx.property(tx.table("Doc"), "anys"), [.dictionary(dict), small, f.link(2)]) }
            for (i, v) in values.enumerated() { #expect(try f.any(i) == v) }
            try f.expectVerified()
            try f.db.writeCopy(to: f.dir.file("copy.realm"))
            let copy = try Database.open(path: f.dir.file("copy.realm"))
            #expect(try copy.read { try dumpObjects($0) } == f.db.read { try dumpObjects($0) })
            #expect(try copy.verify().isOK)
            try f.db.compact()
            #expect(try f.backlinks(0) == [f.docs[2]])
            #expect(try f.backlinks(2, "anys") == [f.docs[3]])
        }
        // Reopened from the file.
        let again = try Database.open(path: dir.file("m.realm"))
        try again.read { s in
            let doc = try s.table("Doc")
            for (i, v) in values.enumerated() { #expect(try s.value(keys.docs[i], "Doc", "any") == v) }
            #expect(try s.list(keys.docs[3], s.property(doc, "anys")) == [.dictionary(dict), small, .typedLink(classID: keys.targetID, key: keys.targets[2])])
            #expect(try s.backlinks(keys.targets[1], in: s.table("Target"), from: "Doc", property: "any") == [keys.docs[2]])
        }
        #expect(try again.verify().isOK)
    }

    /// Levels as docs/FILE_FORMAT.md counts them (the property 1, a collection in it 2, ...; at most 100): the
    /// decoder reads 99 collections nested in one another (`FormatSevenTests`), and writers accept exactly those
    /// and refuse one more, with Realm Core's words.
    @Test func nestingIsAcceptedToTheLimitAndRefusedBeyond() throws {
        let f = try Fixture()
        try f.set(0, Self.nested(99))
        #expect(try f.any(0) == Self.nested(99))
        var deepDictionary = Value.int(1)
        for _ in 0..<99 { deepDictionary = .dictionary(ValueDictionary([("k", deepDictionary)])) }
        try f.set(1, deepDictionary)
        #expect(try f.any(1) == deepDictionary)
        try f.expectVerified()

        for bad in [Self.nested(100), .dictionary(ValueDictionary([("k", Self.nested(99))])), Self.nested(150)] {
            #expect {
                try f.set(2, bad)
            } throws: { e in
                guard case .invalidValue("Doc", "any", let reason)? = e as? StorageError else { return false }
                return reason.hasPrefix("Max nesting level reached")
            }
            #expect {
                try f.db.write { tx in try tx.listAppend(f.docs[2], tx.property(tx.table("Doc"), "anys"), bad) }
            } throws: { e in
                guard case .invalidValue("Doc", "anys", let reason)? = e as? StorageError else { return false }
                return reason.hasPrefix("Max nesting level reached")
            }
        }
        #expect(try f.any(2) == .null)
        #expect(try f.anys(2) == [])
    }

    @Test func valuesAMixedPropertyCannotHoldAreRefused() throws {
        let f = try Fixture()
        // An embedded object exists only inside its owner.
        let part = try f.db.write { tx in
            try tx.createEmbeddedObject(in: f.others[0], tx.property(tx.table("Other"), "part"), ["v": .int(1)])
        }
        let partID = try f.db.read { $0.classID(named: "Part")! }
        func refused(_ v: Value, _ sourceLocation: SourceLocation = #_sourceLocation, _ check: (StorageError) -> Bool) {
            do {
                try f.set(0, v)
                Issue.record("accepted \(v)", sourceLocation: sourceLocation)
            } catch let e as StorageError {
                #expect(check(e), "\(e)", sourceLocation: sourceLocation)
            } catch {
                Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
            }
        }
        refused(.typedLink(classID: partID, key: part)) { "\($0)" == "Doc.any: a mixed value cannot link to an embedded object" }
        refused(.list([.typedLink(classID: partID, key: part)])) { "\($0)".contains("cannot link to an embedded object") }
        refused(.list([.link(f.targets[0])])) { if case .typeMismatch("Doc", "any", _, _) = $0 { true } else { false } }
        refused(.dictionary(ValueDictionary([("k", .link(f.targets[0]))]))) { if case .typeMismatch = $0 { true } else { false } }
        refused(.typedLink(classID: f.targetID, key: ObjectKey(999))) { $0 == .noSuchObject(className: "Target", key: 999) }
        refused(.list([.typedLink(classID: 999, key: ObjectKey(0))])) { $0 == .noSuchClass("#999") }
        for key in ["", "$x", "a.b"] {
            refused(.dictionary(ValueDictionary([(key, .int(1))]))) { if case .invalidValue("Doc", "any", _) = $0 { true } else { false } }
        }
        let big = String(repeating: "x", count: SchemaLimits.maxValueBytes + 1)
        refused(.list([.string(big)])) { if case .valueTooLarge("Doc", "any", _, _) = $0 { true } else { false } }
        #expect(try f.any(0) == .null)
        try f.expectVerified()
    }

    // MARK: Deleting targets and origins

    @Test func deletingATargetNullsErasesOrNullsItsLinksAsRealmCore() throws {
        let f = try Fixture(docs: 5)
        try f.set(0, f.link(0))
        try f.set(1, .list([f.link(0), .int(5), .list([f.link(0), f.link(1)]), f.link(0)]))
        try f.set(2, .dictionary(ValueDictionary([("k", f.link(0)), ("m", .list([f.link(0)])), ("n", f.link(1))])))
        try f.db.write { tx in try tx.setList(f.docs[3], tx.property(tx.table("Doc"), "anys"), [f.link(0), .int(1), f.link(1), .list([f.link(0)])]) }
        try f.set(4, f.link(1))
        #expect(try f.backlinks(0) == [f.docs[0], f.docs[1], f.docs[1], f.docs[1], f.docs[2], f.docs[2]])
        let before = try f.db.snapshot()
        try f.db.write { tx in try tx.delete("Target", f.targets[0]) }

        #expect(try f.any(0) == .null)
        #expect(try f.any(1) == .list([.int(5), .list([f.link(1)])]), "list elements linking to it are erased")
        #expect(try f.any(2) == .dictionary(ValueDictionary([("k", .null), ("m", .list([])), ("n", f.link(1))])),
                "dictionary values linking to it become null, their keys stay")
        #expect(try f.anys(3) == [.int(1), f.link(1), .list([])])
        #expect(try f.backlinks(1) == [f.docs[1], f.docs[2], f.docs[4]])
        #expect(try f.backlinks(1, "anys") == [f.docs[3]])
        try f.expectVerified()

        // The documents changed by the deletion are reported modified.
        let changes = try f.db.read { s in try s.changes(in: "Doc", since: before) }
        #expect(Set(changes.modified.keys) == Set(f.docs[0...3]))
        #expect(changes.modified[f.docs[1]] == ["any"])
        #expect(changes.modified[f.docs[3]] == ["anys"])
    }

    @Test func deletingAnOriginRemovesItsBacklinks() throws {
        let f = try Fixture()
        try f.set(0, .list([f.link(0), .dictionary(ValueDictionary([("a", f.link(1))]))]))
        try f.set(1, f.link(0))
        try f.db.write { tx in try tx.setList(f.docs[2], tx.property(tx.table("Doc"), "anys"), [f.link(1), .list([f.link(1)])]) }
        try f.db.write { tx in
            try tx.delete("Doc", f.docs[0])
            try tx.delete("Doc", f.docs[2])
        }
        #expect(try f.backlinks(0) == [f.docs[1]])
        #expect(try f.backlinks(1).isEmpty)
        #expect(try f.backlinks(1, "anys").isEmpty)
        try f.expectVerified()
    }

    @Test func anObjectLinkingToItselfIsDeletedCleanly() throws {
        let f = try Fixture()
        let docID = try f.db.read { $0.classID(named: "Doc")! }
        try f.set(0, .list([.typedLink(classID: docID, key: f.docs[0]), .typedLink(classID: docID, key: f.docs[1]), f.link(0)]))
        try f.set(1, .typedLink(classID: docID, key: f.docs[0]))
        try f.db.write { tx in try tx.delete("Doc", f.docs[0]) }
        #expect(try f.any(1) == .null)
        #expect(try f.backlinks(0).isEmpty)
        try f.expectVerified()
    }

    // MARK: Schema changes

    @Test func deleteAllRemoveClassAndRemovePropertyKeepLinksAndBacklinksInStep() throws {
        let f = try Fixture()
        try f.set(0, .list([f.link(0), .typedLink(classID: f.otherID, key: f.others[0])]))
        try f.set(1, .dictionary(ValueDictionary([("o", .typedLink(classID: f.otherID, key: f.others[1])), ("t", f.link(1))])))
        try f.db.write { tx in try tx.setList(f.docs[2], tx.property(tx.table("Doc"), "anys"), [f.link(2), .typedLink(classID: f.otherID, key: f.others[0])]) }

        // Every Other goes: links to them leave lists and become null in dictionaries; links to targets stay.
        try f.db.write { tx in try tx.deleteAll(tx.table("Other")) }
        #expect(try f.any(0) == .list([f.link(0)]))
        #expect(try f.any(1) == .dictionary(ValueDictionary([("o", .null), ("t", f.link(1))])))
        #expect(try f.anys(2) == [f.link(2)])
        #expect(try f.backlinks(0) == [f.docs[0]])
        try f.expectVerified()

        // Removing the class its links reached leaves the values without them.
        try f.db.write { tx in try tx.removeClass("Target") }
        #expect(try f.any(0) == .list([]))
        #expect(try f.any(1) == .dictionary(ValueDictionary([("o", .null), ("t", .null)])))
        #expect(try f.anys(2) == [])
        try f.expectVerified()

        // Removing a mixed property drops the backlink properties it made in its targets.
        try f.db.write { tx in
            let o = try tx.createObject("Other", ["n": .int(9)])
            try tx.set(f.docs[3], "Doc", "any", .typedLink(classID: f.otherID, key: o))
        }
        #expect(try f.db.read { $0.catalogue.classInfo(named: "Other")!.properties.contains { $0.name == "@links.Doc.any" } })
        try f.db.write { tx in try tx.removeProperty("Doc", "any") }
        #expect(try f.db.read { !$0.catalogue.classInfo(named: "Other")!.properties.contains { $0.name == "@links.Doc.any" } })
        try f.expectVerified()

        // Deleting every origin empties its targets' backlink trees.
        try f.db.write { tx in
            let o = try tx.createObject("Other", ["n": .int(10)])
            try tx.setList(f.docs[3], tx.property(tx.table("Doc"), "anys"), [.typedLink(classID: f.otherID, key: o)])
        }
        try f.db.write { tx in try tx.deleteAll(tx.table("Doc")) }
        try f.db.read { s in
            let other = s.catalogue.classInfo(named: "Other")!
            #expect(other.properties.filter { $0.type == .backlink }.allSatisfy { $0.indexRoot == 0 })
        }
        try f.expectVerified()
    }

    @Test func renamingAMixedPropertyRenamesItsBacklinkProperties() throws {
        let f = try Fixture()
        try f.set(0, f.link(0))
        try f.db.write { tx in try tx.renameProperty("Doc", from: "any", to: "value") }
        #expect(try f.db.read { s in try s.backlinks(f.targets[0], in: s.table("Target"), from: "Doc", property: "value") } == [f.docs[0]])
        #expect(try f.db.read { $0.catalogue.classInfo(named: "Target")!.properties.contains { $0.name == "@links.Doc.value" } })
    }

    // MARK: Verify

    @Test func verifyFindsADanglingTypedLinkAndAMissingBacklink() throws {
        let f = try Fixture()
        try f.set(0, f.link(0))
        try f.db.write { tx in
            let h = try tx.property(tx.table("Doc"), "any")
            try tx.storeUncheckedForTesting(f.docs[1], h, .list([.typedLink(classID: f.targetID, key: ObjectKey(999))]))
            try tx.storeUncheckedForTesting(f.docs[2], h, .dictionary(ValueDictionary([("a", f.link(1))])))
            try tx.storeUncheckedForTesting(f.docs[0], h, .null)
        }
        let report = try f.db.verify()
        #expect(!report.isOK)
        let text = "\(report)"
        #expect(text.contains("Doc #\(f.docs[1].rawValue).any: typed link to missing Target #999"), "\(text)")
        #expect(text.contains("Doc #\(f.docs[2].rawValue).any links to Target #\(f.targets[1].rawValue), which has no backlink to it"), "\(text)")
        #expect(text.contains("1 backlink(s) from Doc #\(f.docs[0].rawValue).any, which holds 0 link(s)"), "\(text)")
    }

    // MARK: Format 5

    /// A file kept at format 5 (another process has it open) takes plain mixed values but no typed link or
    /// nested collection: a build reading format 5 would misread them.
    @Test func aFormatFiveFileRefusesTypedLinksAndNestedCollections() throws {
        try PageBoundChecksumTests.withSharedFormatFiveFixture { db in
            try db.write { tx in
                let all = try tx.table("AllTypes"), mixed = try tx.property(all, "mixed")
                let key = try #require(try tx.keys(all).first)
                let dog = try #require(try tx.keys(tx.table("Dog")).first)
                let dogID = try #require(tx.classID(named: "Dog"))
                for v: Value in [.typedLink(classID: dogID, key: dog), .list([.int(1)]), .dictionary(ValueDictionary())] {
                    #expect {
                        try tx.set(key, mixed, v)
                    } throws: { e in
                        "\(e)".contains("needs file format 7; this file is format 5")
                    }
                }
                try tx.set(key, mixed, .string("plain"))
            }
            #expect(try db.latestMeta().format == 5)
            #expect(try db.verify().isOK)
        }
    }
}

/// Seeded random writes of mixed values holding typed links at random depths, deletes of targets and origins,
/// checked after every commit against a plain model (whose nullify rules are written out here, apart from the
/// engine's) and by `verify()`.
@Suite struct MixedLinkRandomTests {
    /// The model's own statement of Realm Core's rules: the value itself null, list elements erased,
    /// dictionary values null.
    static func nullify(_ v: Value, _ gone: (UInt32, ObjectKey)) -> Value {
        switch v {
        case .typedLink(let c, let k) where c == gone.0 && k == gone.1: return .null
        case .list(let l):
            return .list(l.compactMap { e -> Value? in
                if case .typedLink(let c, let k) = e, c == gone.0, k == gone.1 { return nil }
                return nullify(e, gone)
            })
        case .dictionary(let d): return .dictionary(ValueDictionary(d.map { ($0.key, nullify($0.value, gone)) }))
        default: return v
        }
    }

    static func links(_ v: Value) -> [(UInt32, ObjectKey)] {
        switch v {
        case .typedLink(let c, let k): return [(c, k)]
        case .list(let l): return l.flatMap(links)
        case .dictionary(let d): return d.values.flatMap(links)
        default: return []
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64]) func randomWritesAndDeletesKeepLinksAndBacklinksExact(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let dir = TempDir()
        let db = try Database.open(path: dir.file("r.realm"))
        try db.write { tx in try tx.createClasses(MixedLinkTests.schema) }
        let (targetID, otherID, docID) = try db.read { s in (s.classID(named: "Target")!, s.classID(named: "Other")!, s.classID(named: "Doc")!) }
        // The model: live objects of each linkable class, and every document's values.
        var live: [UInt32: [ObjectKey]] = [targetID: [], otherID: [], docID: []]
        var any: [ObjectKey: Value] = [:]
        var anys: [ObjectKey: [Value]] = [:]

        func randomValue(_ depth: Int) -> Value {
            switch rng.below(depth > 2 ? 4 : 7) {
            case 0: return .int(Int64(rng.below(100)))
            case 1: return .null
            case 2, 3:
                let c = [targetID, otherID, docID][rng.below(3)]
                guard let ks = live[c], !ks.isEmpty else { return .string("none") }
                return .typedLink(classID: c, key: ks[rng.below(ks.count)])
            case 4, 5: return .list((0..<rng.below(4)).map { _ in randomValue(depth + 1) })
            default: return .dictionary(ValueDictionary((0..<rng.below(4)).map { i in ("k\(i)", randomValue(depth + 1)) }))
            }
        }

        for step in 0..<120 {
            try db.write { tx in
                for _ in 0..<(1 + rng.below(4)) {
                    let op = rng.below(10)
                    let docs = live[docID]!
                    if op < 2 || docs.isEmpty {
                        let c = [targetID, otherID, docID][rng.below(3)]
                        let k = try tx.createObject(tx.catalogue.classInfo(id: c)!.name, [:])
                        live[c]!.append(k)
                        if c == docID { any[k] = .null; anys[k] = [] }
                    } else if op < 5 {
                        let d = docs[rng.below(docs.count)], v = randomValue(1)
                        try tx.set(d, "Doc", "any", v)
                        any[d] = v
                    } else if op < 7 {
                        let d = docs[rng.below(docs.count)], h = try tx.property(tx.table("Doc"), "anys")
                        if rng.below(3) == 0, !anys[d]!.isEmpty {
                            let i = rng.below(anys[d]!.count)
                            try tx.listRemove(d, h, at: i)
                            anys[d]!.remove(at: i)
                        } else {
                            let v = randomValue(1)
                            try tx.listAppend(d, h, v)
                            anys[d]!.append(v)
                        }
                    } else {
                        // Delete an object of a random class (a document is an origin, and may be a target).
                        let c = [targetID, otherID, docID][rng.below(3)]
                        guard let ks = live[c], !ks.isEmpty else { continue }
                        let k = ks[rng.below(ks.count)]
                        try tx.delete(tx.catalogue.classInfo(id: c)!.name, k)
                        live[c]!.removeAll { $0 == k }
                        if c == docID { any[k] = nil; anys[k] = nil }
                        for d in any.keys { any[d] = Self.nullify(any[d]!, (c, k)) }
                        for d in anys.keys {
                            if case .list(let l) = Self.nullify(.list(anys[d]!), (c, k)) { anys[d] = l }
                        }
                    }
                }
            }
            try db.read { s in
                let doc = try s.table("Doc"), h = try s.property(doc, "anys")
                #expect(try Set(s.keys(doc)) == Set(live[docID]!), "step \(step)")
                for d in live[docID]! {
                    #expect(try s.value(d, "Doc", "any") == any[d]!, "seed \(seed) step \(step) doc \(d)")
                    #expect(try s.list(d, h) == anys[d]!, "seed \(seed) step \(step) doc \(d)")
                }
                // Backlinks: once per link, from the model's values.
                for c in [targetID, otherID, docID] {
                    let name = s.catalogue.classInfo(id: c)!.name
                    for t in live[c]! {
                        let fromAny = live[docID]!.flatMap { d in Self.links(any[d]!).filter { $0.0 == c && $0.1 == t }.map { _ in d } }
                        let fromAnys = live[docID]!.flatMap { d in anys[d]!.flatMap(Self.links).filter { $0.0 == c && $0.1 == t }.map { _ in d } }
                        #expect(try s.backlinks(t, in: s.table(name), from: "Doc", property: "any") == fromAny.sorted(), "step \(step)")
                        #expect(try s.backlinks(t, in: s.table(name), from: "Doc", property: "anys") == fromAnys.sorted(), "step \(step)")
                    }
                }
            }
            if step % 30 == 29 {
                let report = try db.verify()
                #expect(report.isOK, "seed \(seed) step \(step): \(report)")
            }
        }
        let report = try db.verify()
        #expect(report.isOK, "\(report)")
    }
}

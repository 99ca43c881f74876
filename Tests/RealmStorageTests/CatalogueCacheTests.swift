import Testing
@testable import RealmStorage

/// The catalogue cache answers by the bytes of a commit root's catalogue section, never by where the root is.
@Suite struct CatalogueCacheTests {
    private func catalogue(objects: UInt64) -> Catalogue {
        var c = Catalogue()
        c.schemaVersion = 3
        c.nextClassID = 2
        c.classes = [ClassInfo(classID: 1, name: "Person", nextColumnID: 2, nextObjectKey: objects, objectCount: objects,
                               tableRoot: 40 + objects, primaryKeyColumnID: 0,
                               properties: [PropertyInfo(columnID: 1, name: "name", type: .string, flags: [.indexed],
                                                         targetClassID: 0, originColumnID: 0, indexRoot: 90 + objects)])]
        return c
    }

    private func root(_ c: Catalogue) -> [UInt8] {
        CommitRoot.encode(catalogue: c.encodeSection(), free: [], log: [], pages: 1)
    }

    /// Two commit roots at the same page that differ in one count: each gets its own catalogue, whichever
    /// the cache last held (a cache keyed by the page would answer the second with the first).
    @Test func sameRefDifferentContentIsDecodedAgain() throws {
        let cache = CatalogueCache()
        let one = catalogue(objects: 1), two = catalogue(objects: 2)
        let nodeOne = root(one), nodeTwo = root(two)
        #expect(try nodeOne.withUnsafeBytes { try cache.catalogue(node: $0, ref: 7, path: "t.realm") } == one)
        #expect(try nodeTwo.withUnsafeBytes { try cache.catalogue(node: $0, ref: 7, path: "t.realm") } == two)
        // What a commit remembers is what the next snapshot of the same bytes gets.
        cache.remember(section: one.encodeSection(), one)
        #expect(try nodeTwo.withUnsafeBytes { try cache.catalogue(node: $0, ref: 7, path: "t.realm") } == two)
        #expect(try nodeOne.withUnsafeBytes { try cache.catalogue(node: $0, ref: 7, path: "t.realm") } == one)
    }

    /// A section whose stated length is shorter than the catalogue written in it is corrupt, not decoded from
    /// the bytes after it (and so never cached under the shorter bytes).
    @Test func aCatalogueRunningPastItsSectionIsCorrupt() throws {
        var node = root(catalogue(objects: 5))
        let length = node.withUnsafeBytes { $0.u32(at: nodeHeaderSize + 4) }
        withUnsafeBytes(of: (length - 9).littleEndian) { for i in 0..<4 { node[nodeHeaderSize + 4 + i] = $0[i] } }
        let cache = CatalogueCache()
        #expect(throws: StorageError.self) { try node.withUnsafeBytes { try cache.catalogue(node: $0, ref: 9, path: "t.realm") } }
    }
}

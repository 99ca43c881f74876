import Foundation
import Testing
@testable import RealmDB
import TestSupport

/// The README's object API example, kept compiling and true.
@Suite struct ReadmeObjectAPITests {
    final class RDog: Object {
        @Persisted var name = ""
        @Persisted var age = 0
        @Persisted var owner: RPerson?
        override class func className() -> String { "Dog" }
    }

    final class RPerson: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted(indexed: true) var name = ""
        @Persisted var dogs: List<RDog>
        @Persisted(originProperty: "owner") var ownedDogs: LinkingObjects<RDog>
        override class func className() -> String { "Person" }
    }

    @Test func readmeExampleWorks() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: dir.file("dogs.realm")), objectTypes: [RDog.self, RPerson.self]))
        let ann = RPerson(value: ["id": 1, "name": "Ann"])
        try realm.write {
            let rex = RDog(value: ["name": "Rex", "age": 3, "owner": ann])
            realm.add(rex)
            ann.dogs.append(rex)
            realm.create(RDog.self, value: ["name": "Fido", "age": 1, "owner": ["id": 2, "name": "Bob"]])
        }
        let puppies = realm.objects(RDog.self).filter { $0.age < 2 }.sorted(byKeyPath: "owner.name")
        #expect(puppies.count == 1 && ann.ownedDogs.count == 1)
        var changes: [String] = []
        let token = puppies.observe { change in
            switch change {
            case .initial(let r): changes.append("initial \(r.count)")
            case .update(_, let d, let i, let m): changes.append("update \(d) \(i) \(m)")
            case .error: changes.append("error")
            }
        }
        try realm.write { realm.create(RDog.self, value: ["name": "Ace", "age": 0, "owner": ann]) }
        #expect(changes == ["initial 1", "update [] [0] []"])
        token.invalidate()
    }
}

"""Games on a schedule: one game as a job (`runner`), a match (`match`), a tournament's plan
(`schedule`, `config`), its parallel, resumable run (`run`) and its standings (`standings`)."""

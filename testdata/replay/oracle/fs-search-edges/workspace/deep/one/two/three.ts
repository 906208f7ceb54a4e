needle deep
